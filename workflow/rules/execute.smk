# One execute rule per benchmark family in use, from one definition: the families differ only in
# the files a point writes (PD14: record and spikes; others: the record).
for family in USED_FAMILIES.values():

    rule:
        name:
            execute_rule(family)
        input:
            spec=f"{POINT}/spec.json",
            environment=get_point_environment,
            derived=get_point_derived_inputs,
        output:
            **family_outputs(family),
        log:
            paths.point_log(POINT),
        benchmark:
            paths.point_benchmark(POINT)
        wildcard_constraints:
            experiment=family_experiments(family),
        conda:
            get_point_conda_env
        envmodules:
            *config["envmodules"],
        threads: get_point_resource("threads")
        resources:
            # (read once its derived inputs exist: a description's synapse count)
            mem_mb=get_point_mem_mb,
            runtime=get_point_runtime_min,
            # The point's shape as a SLURM job (ignored by the local executor).
            nodes=get_point_resource("nodes"),
            tasks=get_point_resource("tasks"),
            tasks_per_node=get_point_resource("tasks_per_node"),
            cpus_per_task=get_point_resource("cpus_per_task"),
            mpi=get_point_resource("mpi"),
            slurm_partition=get_point_slurm("partition"),
            slurm_account=get_point_slurm("account"),
            constraint=get_point_slurm("constraint"),
            qos=get_point_slurm("qos"),
            # Whole nodes, threads per core and the site's own flags (config slurm: exclusive, ...).
            slurm_extra=get_point_slurm_extra,
            # GPUs of the point; snakemake-executor-plugin-slurm requests them.
            gpu=get_point_resource("gpu"),
            # Profiles may cap this to run one point at a time (no two benchmarks share cores).
            point_slots=1,
        script:
            "../../scripts/execute_point.py"
