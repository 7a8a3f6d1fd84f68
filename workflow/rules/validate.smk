rule point_statistics:
    input:
        record=f"{POINT}/record.json",
        spikes=f"{POINT}/spikes.npz",
    output:
        stats=f"{POINT}/stats.npz",
    log:
        f"logs/point_statistics/{POINT_LOG}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        settings=get_statistics_settings,
    script:
        "../../scripts/point_statistics.py"


rule validate_point:
    input:
        stats=f"{POINT}/stats.npz",
        reference=get_reference_stats,
        seeds=get_seed_stats,
    output:
        validation=f"{POINT}/validation.json",
    log:
        f"logs/validate/{POINT_LOG}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        min_samples=config["validation"]["min_samples"],
        reference_simulator=get_reference_simulator,
    script:
        "../../scripts/validate_point.py"
