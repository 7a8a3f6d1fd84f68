rule execute_point:
    input:
        spec=f"{POINT}/spec.json",
    output:
        record=f"{POINT}/record.json",
        spikes=f"{POINT}/spikes.npz",
    log:
        f"logs/execute/{POINT_LOG}.log",
    benchmark:
        f"benchmarks/execute/{POINT_LOG}.tsv"
    conda:
        get_point_conda_env
    envmodules:
        *config["envmodules"],
    threads: get_point_threads
    resources:
        mem_mb=get_point_mem_mb,
        runtime=get_point_runtime_min,
        # The point's shape as a SLURM job (ignored by the local executor).
        nodes=get_point_shape("nodes"),
        tasks=get_point_tasks(per_node=False),
        tasks_per_node=get_point_tasks(per_node=True),
        cpus_per_task=get_point_shape("cpus_per_task"),
        mpi=get_point_mpi,
        slurm_partition=get_point_slurm("partition"),
        slurm_account=get_point_slurm("account"),
        constraint=get_point_slurm("constraint"),
        qos=get_point_slurm("qos"),
        # GPUs of the point (brian2-genn, brian2-cuda: 1); snakemake-executor-plugin-slurm requests them.
        gpu=get_point_gpus,
        # Profiles may cap this to run one point at a time (no two benchmarks share cores).
        point_slots=1,
    script:
        "../../scripts/execute_point.py"
