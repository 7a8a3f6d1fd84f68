"""Snakemake entry (collect_experiment): records and validation results of one experiment ->
points.csv, ranks.csv, validation.csv."""

from snnbench.table import collect, collect_validation

inputs = snakemake.input  # noqa: F821 (provided by Snakemake)
points, ranks = collect(
    inputs.records,
    snakemake.params.activity_check,  # noqa: F821
    inputs.benchmarks,
    inputs.validations,
    snakemake.params.tolerance,  # noqa: F821
)
points.to_csv(snakemake.output.points, index=False)  # noqa: F821
ranks.to_csv(snakemake.output.ranks, index=False)  # noqa: F821
collect_validation(inputs.records, inputs.validations).to_csv(snakemake.output.validation, index=False)  # noqa: F821
