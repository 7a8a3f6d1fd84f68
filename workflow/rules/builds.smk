# Each simulator build's environment, once, in the per-user cache shared by checkouts
# (snnbench.builds: <cache>/<key>, the key a hash of what defines the environment). Its points
# depend on it; a build that fails stops only its own points.
rule build_environment:
    output:
        f"{BUILD_ROOT}/{{key}}/build.json",
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
        # Not beside a running point (profiles cap point_slots): a build would take its cores.
        point_slots=1,
    params:
        build=get_build,
    script:
        "../../scripts/build_environment.py"
