"""Snakemake entry (collect_experiment): records of one experiment -> points.csv, ranks.csv."""

from snnbench.table import collect

points, ranks = collect(
    snakemake.input.records,  # noqa: F821 (provided by Snakemake)
    snakemake.params.activity_check,  # noqa: F821
    snakemake.input.benchmarks,  # noqa: F821
)
points.to_csv(snakemake.output.points, index=False)  # noqa: F821
ranks.to_csv(snakemake.output.ranks, index=False)  # noqa: F821
