# A network model whose network is data before it is a simulation (the multi-area model): its
# description derived once per (scales, state, simulated areas) by the model's own code, in the
# model's own environment; every point of that network reads it (snnbench.network.models).
rule describe_network:
    input:
        environment=get_description_environment,
        remade=get_description_remade,
    output:
        paths.NETWORK_DESCRIPTION,
    log:
        "logs/networks/{model}/{description}.log",
    benchmark:
        "benchmarks/networks/{model}/{description}.tsv"
    wildcard_constraints:
        description=r"[A-Za-z0-9_.+-]+",
    localrule: True
    conda:
        get_description_conda_env
    params:
        derive=get_description_params,
    script:
        "../../scripts/describe_network.py"
