"""Snakemake entry (execute_point): run one point and write its record, ok or failed."""

import json
from pathlib import Path

from snnbench.config import time_limit_s
from snnbench.execute import run_point

config = snakemake.config  # noqa: F821 (provided by Snakemake)
spec = json.loads(Path(snakemake.input.spec).read_text())  # noqa: F821
run_point(
    spec_path=snakemake.input.spec,  # noqa: F821
    record_path=snakemake.output.record,  # noqa: F821
    spikes_path=snakemake.output.spikes,  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    # From the config, not params: bounds and limits must not make finished points rerun.
    bounds=config["activity_check"],
    time_limit_s=time_limit_s(config, spec),
)
