rule archive_experiment:
    input:
        get_archive_files,
    output:
        "results/archives/{experiment}.tar.gz",
    log:
        "logs/archive/{experiment}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        config=get_archive_config,
    script:
        "../../scripts/archive_experiment.py"


rule import_archive:
    input:
        get_archive,
    output:
        points="results/imported/{archive}/points.csv",
        content=directory("results/imported/{archive}/content"),
    log:
        "logs/archive/imported/{archive}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        activity_check=config["activity_check"],
        tolerance=get_validation_tolerance(),
    script:
        "../../scripts/import_archive.py"


rule archive:
    input:
        expand("results/archives/{experiment}.tar.gz", experiment=EXPERIMENTS),
    localrule: True


rule crate_experiment:
    input:
        get_archive_files,
    output:
        directory("results/crates/{experiment}"),
    log:
        "logs/crate/{experiment}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        run=get_crate_run,
    script:
        "../../scripts/crate_experiment.py"


rule crate:
    input:
        expand("results/crates/{experiment}", experiment=EXPERIMENTS),
    localrule: True
