"""Snakemake entry (plot_figure): one figure of one experiment, PNG and PDF, for any family.

params.figure: {"panels": [...], "series": the column naming the series ("simulator" for PD14,
"framework" for snn-training), "caption": ...}.
"""

from snnbench import figures
from snnbench.tables.frames import read_points

points = read_points(snakemake.input.points)  # noqa: F821 (provided by Snakemake)
params = snakemake.params.figure  # noqa: F821
# Which versions, machine and dates the figure shows, before series are split by machine.
note = figures.provenance_line(points, params.get("series", "simulator"))
# Tables of several machines concatenated: each series per machine.
data = figures.PanelData(*figures.by_machine(points, params.get("series", "simulator")))
if snakemake.input.reference:  # noqa: F821 (a shared reference ensemble's table: the members that judged these)
    reference = read_points(snakemake.input.reference[0])  # noqa: F821
    data.reference = reference[reference["path"].isin(params["reference_points"])]
if figures.needs_distributions(params["panels"]):
    data.distributions = figures.load_distributions(snakemake.input.stats, data.with_reference, series=data.series)  # noqa: F821
figures.draw(
    params["panels"],
    data,
    snakemake.output.png,  # noqa: F821
    snakemake.output.pdf,  # noqa: F821
    title=snakemake.wildcards.experiment,  # noqa: F821
    note=note,
)
