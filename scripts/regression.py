"""Snakemake entry (regression): ratios current / baseline per point, compared only with the
references of the point's own machine, slowdowns flagged."""

from snnbench.results import regression
from snnbench.tables.frames import read_points, write_table

tolerance = snakemake.params.tolerance  # noqa: F821 (provided by Snakemake)
ratios = regression.compare(
    regression.read_tables(snakemake.input.baseline),  # noqa: F821
    read_points(snakemake.input.current),  # noqa: F821
    tolerance,
    tolerances=snakemake.params.tolerances,  # noqa: F821
)
write_table(ratios, snakemake.output.ratios)  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(regression.render(ratios, tolerance) + "\n")
