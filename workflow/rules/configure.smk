rule configure_point:
    output:
        spec=f"{POINT}/spec.json",
    log:
        f"logs/configure/{POINT_LOG}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        spec=get_point_spec_as_written,
    script:
        "../../scripts/write_spec.py"
