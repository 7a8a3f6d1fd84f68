# Each environment the workflow makes (a simulator build's, a named one's), once, in the per-user
# cache shared by checkouts (<cache>/<key>, the key a hash of what defines the environment). Its
# points depend on it; one that fails stops only its own points. Local: under SLURM the head makes
# it before its points are submitted, so no compute node needs PyPI or a source's URL.
rule build_environment:
    output:
        str(environments.made_marker("{key}")),
    log:
        "logs/build/{key}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    threads: 2
    resources:
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
