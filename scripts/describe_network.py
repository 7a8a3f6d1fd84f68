"""Snakemake entry (describe_network): derive a network model's description in the model's environment."""

import os
from pathlib import Path

from snnbench import paths
from snnbench.network import describe

# The deriving process imports the snnbench this job imported (see execute_point.py).
os.environ.update(paths.scripts_on_path(dict(os.environ)))
describe.describe_network(
    snakemake.wildcards.model,  # noqa: F821 (provided by Snakemake)
    snakemake.params.derive,  # noqa: F821
    Path(snakemake.output[0]),  # noqa: F821
    Path(snakemake.log[0]),  # noqa: F821
)
