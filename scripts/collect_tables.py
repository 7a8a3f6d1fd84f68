"""Snakemake entry (collect_experiment): records and validation results of one experiment ->
points.csv, ranks.csv, validation.csv."""

from snnbench import planning
from snnbench.tables.collect import collect_tables
from snnbench.tables.frames import write_table

inputs = snakemake.input  # noqa: F821 (provided by Snakemake)
# The plan of every point, as the workflow made it (checked there): a record of another plan is not read.
planned = planning.plan(snakemake.config, checked=True).points  # noqa: F821
points, ranks, validation = collect_tables(
    inputs.records,
    snakemake.params.activity_check,  # noqa: F821
    inputs.benchmarks,
    inputs.collected,
    snakemake.params.tolerance,  # noqa: F821
    inputs.context,
    planned,
)
write_table(points, snakemake.output.points)  # noqa: F821
write_table(ranks, snakemake.output.ranks)  # noqa: F821
write_table(validation, snakemake.output.validation)  # noqa: F821
