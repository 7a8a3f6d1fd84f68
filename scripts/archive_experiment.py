"""Snakemake entry (archive_experiment): pack one experiment's tables, records and provenance."""

from snnbench.results import archive

manifest = archive.pack(
    snakemake.output[0],  # noqa: F821 (provided by Snakemake)
    snakemake.wildcards.experiment,  # noqa: F821
    [*snakemake.input, *archive.hardware_files(snakemake.input)],  # noqa: F821
    snakemake.params.config,  # noqa: F821
)
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(f"packed {len(manifest['files'])} files into {snakemake.output[0]}\n")  # noqa: F821
