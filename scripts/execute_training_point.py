"""Snakemake entry (execute_training_point): run one snn-training point and write its record."""

import json
from pathlib import Path

from snnbench.config import time_limit_s
from snnbench.training.execute import run_point

config = snakemake.config  # noqa: F821 (provided by Snakemake)
spec = json.loads(Path(snakemake.input.spec).read_text())  # noqa: F821
run_point(
    spec_path=snakemake.input.spec,  # noqa: F821
    record_path=snakemake.output.record,  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    # From the config, not params: a changed limit must not make finished points rerun.
    time_limit_s=time_limit_s(config, spec),
)
