"""Snakemake entry (import_archive): unpack an archive and collect its records again."""

from snnbench.results import archive
from snnbench.tables.frames import write_table

points = archive.read(
    snakemake.input[0],  # noqa: F821 (provided by Snakemake)
    snakemake.output.content,  # noqa: F821
    snakemake.params.activity_check,  # noqa: F821
    snakemake.params.tolerance,  # noqa: F821
    label=snakemake.wildcards.archive,  # noqa: F821
)
write_table(points, snakemake.output.points)  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(f"{len(points)} points from {snakemake.input[0]}\n")  # noqa: F821
