"""Snakemake entry (plot_figure): one figure of one experiment, PNG and PDF."""

import pandas as pd
from snnbench import figures

points = pd.read_csv(snakemake.input.points)  # noqa: F821 (provided by Snakemake)
panels = snakemake.params.figure["panels"]  # noqa: F821
data = figures.Data(points, series="simulator")
if figures.needs_distributions(panels):
    data.distributions = figures.load_distributions(snakemake.input.stats, points)  # noqa: F821
figures.draw(panels, data, snakemake.output.png, snakemake.output.pdf, title=snakemake.wildcards.experiment)  # noqa: F821
