"""Snakemake entry (describe_network): derive a network model's description in the model's environment."""

from pathlib import Path

from snnbench.network import describe

describe.describe_network(
    snakemake.wildcards.model,  # noqa: F821 (provided by Snakemake)
    snakemake.params.derive,  # noqa: F821
    Path(snakemake.output[0]),  # noqa: F821
    Path(snakemake.log[0]),  # noqa: F821
)
