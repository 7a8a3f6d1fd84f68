"""Snakemake entry (regression): ratios current / baseline per point, slowdowns flagged."""

import pandas as pd
from snnbench import regression

tolerance = snakemake.params.tolerance  # noqa: F821 (provided by Snakemake)
ratios = regression.compare(pd.read_csv(snakemake.input.baseline), pd.read_csv(snakemake.input.current), tolerance)  # noqa: F821
ratios.to_csv(snakemake.output.ratios, index=False)  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    log.write(regression.render(ratios, tolerance) + "\n")
