rule collect_experiment:
    input:
        records=get_experiment_records,
        benchmarks=get_experiment_benchmarks,
        collected=get_experiment_collected,
        context=get_experiment_context,
    output:
        points="results/{experiment}/points.csv",
        ranks="results/{experiment}/ranks.csv",
        validation="results/{experiment}/validation.csv",
    log:
        "logs/collect/{experiment}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        activity_check=config["activity_check"],
        tolerance=get_validation_tolerance(),
    script:
        "../../scripts/collect_tables.py"


rule collect_all:
    input:
        points=expand("results/{experiment}/points.csv", experiment=EXPERIMENTS),
        imported=expand("results/imported/{archive}/points.csv", archive=ARCHIVES),
    output:
        points="results/points.csv",
    log:
        "logs/collect/all.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    script:
        "../../scripts/concat_tables.py"


# A job that did not finish (e.g. ended by SLURM) stops its experiment's collect: write its tables
# from the records on disk instead, so that its failed points show; then the run's summary.
onerror:
    run_failed()


# The run's summary; then "done" means the targets were made: a run that left some out ends non-zero naming them.
onsuccess:
    run_succeeded()
