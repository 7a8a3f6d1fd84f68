"""Snakemake entry (crate_experiment): one experiment's run as a Workflow Run RO-Crate (snnbench.results.crate)."""

import os

from snnbench.results import archive, crate

run = crate.Run(
    experiment=snakemake.wildcards.experiment,  # noqa: F821 (provided by Snakemake)
    files=[*snakemake.input, *archive.hardware_files(snakemake.input)],  # noqa: F821
    **snakemake.params.run,  # noqa: F821
)
held = crate.write(snakemake.output[0], run, os.environ.get(crate.LICENSE_ENV))  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(f"wrote {snakemake.output[0]}: {held['entities']} entities, by type {held['by_type']}\n")  # noqa: F821
