"""Snakemake entry (validate_point): distances of one point's statistics to its reference run
and to its other seeds."""

from snnbench.network.validation import validate_point

result = validate_point(
    snakemake.input.stats,  # noqa: F821 (provided by Snakemake)
    snakemake.input.reference,  # noqa: F821
    list(snakemake.input.seeds),  # noqa: F821
    snakemake.output.validation,  # noqa: F821
    snakemake.params.min_samples,  # noqa: F821
)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(f"reference {result['reference']}, checked {result['checked']} {result.get('reason', '')}\n")
