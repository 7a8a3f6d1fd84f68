"""Snakemake entry (point_statistics): validation statistics of one point's recorded spikes."""

import json

from snnbench.network.validation import point_statistics

meta = point_statistics(
    snakemake.input.record,  # noqa: F821 (provided by Snakemake)
    snakemake.input.spikes,  # noqa: F821
    snakemake.output.stats,  # noqa: F821
    dict(snakemake.params.settings),  # noqa: F821
)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(json.dumps(meta) + "\n")
