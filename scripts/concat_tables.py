"""Snakemake entry (collect_all): one table across all experiments, and the tables of the
archives read beside them (column `source`: local, or the archive's label)."""

import pandas as pd

tables = [pd.read_csv(path).assign(source="local") for path in snakemake.input.points]  # noqa: F821 (Snakemake)
tables += [pd.read_csv(path) for path in snakemake.input.imported]  # noqa: F821
pd.concat(tables, ignore_index=True).to_csv(snakemake.output.points, index=False)  # noqa: F821
