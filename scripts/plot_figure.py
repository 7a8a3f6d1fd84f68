"""Snakemake entry (plot_figure): one figure of one experiment, PNG and PDF."""

import pandas as pd
from snnbench import figures

figures.draw(
    snakemake.wildcards.figure,  # noqa: F821 (provided by Snakemake)
    pd.read_csv(snakemake.input.points),  # noqa: F821
    snakemake.output.png,  # noqa: F821
    snakemake.output.pdf,  # noqa: F821
)
