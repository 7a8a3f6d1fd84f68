"""Snakemake entry (collect_experiment): records and validation results of one experiment ->
points.csv, ranks.csv, validation.csv."""

from snnbench.table import collect_tables

inputs = snakemake.input  # noqa: F821 (provided by Snakemake)
points, ranks, validation = collect_tables(
    inputs.records,
    snakemake.params.activity_check,  # noqa: F821
    inputs.benchmarks,
    inputs.validations,
    snakemake.params.tolerance,  # noqa: F821
)
points.to_csv(snakemake.output.points, index=False)  # noqa: F821
ranks.to_csv(snakemake.output.ranks, index=False, float_format="%.10g")  # noqa: F821
# Distances and sample statistics to 6 significant digits: 24 rows per point add up.
validation.to_csv(snakemake.output.validation, index=False, float_format="%.6g")  # noqa: F821
