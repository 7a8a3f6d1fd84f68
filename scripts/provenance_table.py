"""Snakemake entry (provenance_table): every point's provenance as an HTML table for the report."""

from snnbench.results import report
from snnbench.tables.frames import read_points

table = report.provenance_table(snakemake.input.records, read_points(snakemake.input.points))  # noqa: F821 (Snakemake)
title = f"Provenance of the points of experiment {snakemake.wildcards.experiment}"  # noqa: F821
with open(snakemake.output[0], "w") as out:  # noqa: F821
    out.write(report.to_html(table, title))
