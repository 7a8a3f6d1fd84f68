"""Snakemake entry (collect_all): one table across all experiments, and the tables of the
archives read beside them (column `source`: local, or the archive's label)."""

import pandas as pd
from snnbench.tables.frames import read_points, write_table

tables = [read_points(path).assign(source="local") for path in snakemake.input.points]  # noqa: F821 (Snakemake)
tables += [read_points(path) for path in snakemake.input.imported]  # noqa: F821
write_table(pd.concat(tables, ignore_index=True), snakemake.output.points)  # noqa: F821
