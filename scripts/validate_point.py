"""Snakemake entry (validate_point): distances of one point's statistics to its reference ensemble
(the reference run first) and to its other seeds."""

from snnbench.network.validation import validate_point

result = validate_point(
    snakemake.input.stats,  # noqa: F821 (provided by Snakemake)
    list(snakemake.input.reference),  # noqa: F821
    list(snakemake.input.seeds),  # noqa: F821
    snakemake.output.validation,  # noqa: F821
    snakemake.params.min_samples,  # noqa: F821
    snakemake.params.reference_simulator,  # noqa: F821
)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(f"reference {result['reference']}, checked {result['checked']} {result.get('reason', '')}\n")
