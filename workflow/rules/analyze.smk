rule plot_figure:
    input:
        points="results/{experiment}/points.csv",
    output:
        png=report(
            "results/{experiment}/figures/{figure}.png",
            caption="../report/figure.rst",
            category="{experiment}",
            labels={"experiment": "{experiment}", "figure": "{figure}"},
        ),
        pdf="results/{experiment}/figures/{figure}.pdf",
    log:
        "logs/analyze/{experiment}/{figure}.log",
    localrule: True
    conda:
        "../../envs/workflow.yaml"
    params:
        caption=lambda wildcards: figures.caption(wildcards.figure),
    script:
        "../../scripts/plot_figure.py"
