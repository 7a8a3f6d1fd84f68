"""Snakemake entry (compare_builds): the regression view between an experiment's builds, each
build against the first one named (ratios per point and metric with their spread over seeds)."""

import pandas as pd
from snnbench.figures.build_ratios import draw_ratios
from snnbench.results import regression
from snnbench.tables.frames import read_points, write_table

points = read_points(snakemake.input.points)  # noqa: F821 (provided by Snakemake)
baseline, *others = snakemake.params.builds  # noqa: F821
tolerance, tolerances = snakemake.params.tolerance, snakemake.params.tolerances  # noqa: F821
ratios = pd.concat(
    [regression.compare_builds(points, baseline, other, tolerance, tolerances) for other in others], ignore_index=True
)
write_table(ratios, snakemake.output.ratios)  # noqa: F821
draw_ratios(ratios, tolerance, snakemake.output.png, snakemake.output.pdf)  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(regression.render(ratios, tolerance) + "\n")
