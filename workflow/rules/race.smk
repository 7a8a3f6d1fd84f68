# The community race (Senk et al. 2026): for each performance-recipe experiment, where its result
# stands among the published entries (figure) and its row in the living table's columns (export).
rule race_standings:
    input:
        points="results/{experiment}/points.csv",
        accuracy=get_race_accuracy_table,
    output:
        csv="results/{experiment}/race/standings.csv",
        md="results/{experiment}/race/standings.md",
        points="results/{experiment}/race/points.csv",
        png=report(
            "results/{experiment}/race/standings.png",
            caption="../report/race.rst",
            category="{experiment}",
            subcategory="Community race",
            labels={"experiment": "{experiment}", "figure": "standings"},
        ),
        pdf="results/{experiment}/race/standings.pdf",
    log:
        "logs/race/{experiment}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        run=get_experiment_summary,
    script:
        "../../scripts/race_standings.py"
