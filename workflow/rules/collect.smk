rule collect_experiment:
    input:
        records=get_experiment_records,
        benchmarks=get_experiment_benchmarks,
    output:
        points="results/{experiment}/points.csv",
        ranks="results/{experiment}/ranks.csv",
    log:
        "logs/collect/{experiment}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        activity_check=config["activity_check"],
    script:
        "../../scripts/collect_tables.py"


rule collect_all:
    input:
        points=expand("results/{experiment}/points.csv", experiment=EXPERIMENTS),
    output:
        points="results/points.csv",
    log:
        "logs/collect/all.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    script:
        "../../scripts/concat_tables.py"
