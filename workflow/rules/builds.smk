# Each environment the workflow makes (a simulator build's, a named one's), once, in the per-user
# cache shared by checkouts (<cache>/<key>, the key a hash of what defines the environment). Its
# points depend on it; one that fails stops only its own points.
rule build_environment:
    output:
        str(environments.made_marker("{key}")),
    log:
        "logs/build/{key}.log",
    conda:
        "../../envs/workflow.yaml"
    threads: 2
    resources:
        mem_mb=4000,
        runtime=120,
        slurm_partition=get_build_slurm("partition"),
        slurm_account=get_build_slurm("account"),
        constraint=get_build_slurm("constraint"),
        qos=get_build_slurm("qos"),
        # The site's own flags; a build's job needs neither whole nodes nor one thread per core.
        slurm_extra=get_build_slurm("extra"),
        # Not beside a running point (profiles cap point_slots): a build would take its cores.
        point_slots=1,
    params:
        build=get_build,
    script:
        "../../scripts/build_environment.py"


# This checkout's .venv-<environment> on top of the cached environment of a named environment, with
# the checkout's snnbench installed editable (seconds). Local: it writes into the checkout.
rule link_environment:
    input:
        get_linked_environment,
    output:
        f"{paths.REPO}/.venv-{{environment}}/.installed",
    log:
        "logs/build/link-{environment}.log",
    wildcard_constraints:
        environment=r"[A-Za-z0-9_-]+",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        key=get_linked_key,
    script:
        "../../scripts/link_environment.py"
