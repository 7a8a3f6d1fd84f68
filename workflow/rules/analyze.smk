rule plot_figure:
    input:
        points="results/{experiment}/points.csv",
        stats=get_figure_stats,
        reference=get_figure_reference,
    output:
        png=report(
            "results/{experiment}/figures/{figure}.png",
            caption="../report/figure.rst",
            category="{experiment}",
            subcategory="Figures",
            labels={"experiment": "{experiment}", "figure": "{figure}"},
        ),
        pdf="results/{experiment}/figures/{figure}.pdf",
    log:
        "logs/analyze/{experiment}/{figure}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        figure=get_figure_params,
        run=get_experiment_summary,
    script:
        "../../scripts/plot_figure.py"


rule plot_comparison:
    input:
        tables=get_comparison_tables,
    output:
        png=report(
            "results/comparisons/{comparison}.png",
            caption="../report/comparison.rst",
            category="Comparisons",
            labels={"comparison": "{comparison}"},
        ),
        pdf="results/comparisons/{comparison}.pdf",
    log:
        "logs/analyze/comparisons/{comparison}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        figure=get_comparison_params,
    script:
        "../../scripts/plot_comparison.py"


rule provenance_table:
    input:
        points="results/{experiment}/points.csv",
        records=get_experiment_records,
    output:
        report(
            "results/{experiment}/provenance.html",
            caption="../report/provenance.rst",
            category="{experiment}",
            subcategory="Provenance",
            labels={"experiment": "{experiment}", "table": "provenance of every point"},
        ),
    log:
        "logs/analyze/{experiment}/provenance.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    script:
        "../../scripts/provenance_table.py"


rule regression:
    input:
        current="results/points.csv",
        baseline=config["regression"]["baseline"] or [],
    output:
        ratios="results/regression.csv",
    log:
        "logs/analyze/regression.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        tolerance=config["regression"]["tolerance"],
        tolerances=config["regression"]["tolerances"],
    script:
        "../../scripts/regression.py"


rule compare_builds:
    input:
        points="results/{experiment}/points.csv",
    output:
        ratios="results/{experiment}/builds.csv",
        png=report(
            "results/{experiment}/figures/builds.png",
            caption="../report/builds.rst",
            category="{experiment}",
            subcategory="Figures",
            labels={"experiment": "{experiment}", "figure": "builds"},
        ),
        pdf="results/{experiment}/figures/builds.pdf",
    log:
        "logs/analyze/{experiment}/builds.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        builds=get_compared_builds,
        tolerance=config["regression"]["tolerance"],
        tolerances=config["regression"]["tolerances"],
    script:
        "../../scripts/compare_builds.py"
