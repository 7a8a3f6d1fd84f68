"""Snakemake entry (race_standings): a performance experiment's standings among the published
entries of the community race: the figure, the export (CSV and markdown in the living table's
columns, with provenance), and its points with synaptic events from linked accuracy points."""

import pandas as pd
from snnbench import figures
from snnbench.network import race
from snnbench.tables.frames import read_points, write_table

points = read_points(snakemake.input.points)  # noqa: F821 (provided by Snakemake)
linked = list(snakemake.input.accuracy)  # noqa: F821 (the linked accuracy experiment's table, if configured)
accuracy = read_points(linked[0]) if linked else pd.DataFrame()
points = race.link_accuracy(points, accuracy)
write_table(points, snakemake.output.points)  # noqa: F821
table = race.standings(points)
write_table(table, snakemake.output.csv)  # noqa: F821
with open(snakemake.output.md, "w") as md:  # noqa: F821
    md.write(race.to_markdown(table))
figures.draw(
    ["race_energy", "race_year"],
    figures.PanelData(points),
    snakemake.output.png,  # noqa: F821
    snakemake.output.pdf,  # noqa: F821
    title=snakemake.wildcards.experiment,  # noqa: F821
)
