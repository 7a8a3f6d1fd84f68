# The snn-training family: one rule to write a point's spec, one to run it in the framework's
# environment (a fresh child process) and write its record. Collect and analyze are shared.


rule configure_training_point:
    output:
        spec=f"{TRAINING_POINT}/spec.json",
    log:
        f"logs/configure/{TRAINING_POINT_LOG}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        spec=get_training_spec,
    script:
        "../../scripts/write_spec.py"


rule execute_training_point:
    input:
        spec=f"{TRAINING_POINT}/spec.json",
    output:
        record=f"{TRAINING_POINT}/record.json",
    log:
        f"logs/execute/{TRAINING_POINT_LOG}.log",
    benchmark:
        f"benchmarks/execute/{TRAINING_POINT_LOG}.tsv"
    conda:
        get_training_conda_env
    threads: get_training_threads
    resources:
        mem_mb=get_training_mem_mb,
        runtime=get_training_runtime_min,
        # Profiles may cap this to run one point at a time (no two benchmarks share cores).
        point_slots=1,
    script:
        "../../scripts/execute_training_point.py"
