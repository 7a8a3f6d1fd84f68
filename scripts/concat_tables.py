"""Snakemake entry (collect_all): one table across all experiments."""

import pandas as pd

tables = [pd.read_csv(path) for path in snakemake.input.points]  # noqa: F821 (provided by Snakemake)
pd.concat(tables, ignore_index=True).to_csv(snakemake.output.points, index=False)  # noqa: F821
