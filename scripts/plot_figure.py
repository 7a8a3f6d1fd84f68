"""Snakemake entry (plot_figure): one figure of one experiment, PNG and PDF."""

from snnbench import figures
from snnbench.table import read_points
from snnbench.training import figures as training_figures

points = read_points(snakemake.input.points)  # noqa: F821 (provided by Snakemake)
params = snakemake.params.figure  # noqa: F821
png, pdf = snakemake.output.png, snakemake.output.pdf  # noqa: F821
if "training" in params:  # an snn-training experiment: the family's own figures
    training_figures.draw(params["training"], points, png, pdf)
else:
    data = figures.Data(points, series="simulator")
    if figures.needs_distributions(params["panels"]):
        data.distributions = figures.load_distributions(snakemake.input.stats, points)  # noqa: F821
    figures.draw(params["panels"], data, png, pdf, title=snakemake.wildcards.experiment)  # noqa: F821
