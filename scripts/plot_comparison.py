"""Snakemake entry (plot_comparison): one figure from several result tables, one series each."""

import pandas as pd
from snnbench import figures
from snnbench.tables.frames import read_points

params = snakemake.params.figure  # noqa: F821 (provided by Snakemake)
tables = []
for entry, path in zip(params["tables"], snakemake.input.tables, strict=True):  # noqa: F821
    experiment = entry.rpartition("/")[2]
    points = read_points(path)
    tables.append(points[points["experiment"] == experiment].assign(table=entry))
data = figures.PanelData(pd.concat(tables, ignore_index=True), series="table")
figures.draw(
    params["panels"],
    data,
    snakemake.output.png,  # noqa: F821
    snakemake.output.pdf,  # noqa: F821
    title=snakemake.wildcards.comparison,  # noqa: F821
)
