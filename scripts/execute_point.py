"""Snakemake entry (execute_<family>): run one point in its family's child process and write its
record, ok or failed (and the family's other outputs)."""

import os
from pathlib import Path

from snnbench import families, paths
from snnbench.machine import hardware
from snnbench.planning import slurm_request
from snnbench.planning.experiments import experiment_named, time_limit_s
from snnbench.records import inputs, slurm_grant

spec_path = snakemake.input.spec  # noqa: F821 (provided by Snakemake)
# The machine's name as the config gives it, for the record's provenance (not the spec: renaming a
# machine must not make finished points rerun).
os.environ.update(hardware.machine_environment(snakemake.config["machine"]))  # noqa: F821
# The point's processes import the snnbench this job imported, also where their Python has none installed (a
# deployed workflow's, a conda environment's: docs/deploy.md).
os.environ.update(paths.scripts_on_path(dict(os.environ)))
try:
    # A spec cut short since the run began is set aside (its rule writes it again on the next run).
    spec = inputs.read_json(spec_path, set_aside_damaged=True)
except inputs.DamagedInput as damaged:
    raise SystemExit(str(damaged)) from None
# What the point's SLURM job asked beyond its shape, for the record to set against what it got.
asked = slurm_request.asked(snakemake.config, experiment_named(snakemake.config, spec["experiment"]))  # noqa: F821
os.environ.update(slurm_grant.asked_environment(asked))
families.of_spec(spec).run_point(
    spec=spec,
    spec_path=spec_path,
    outputs={Path(path).name: path for path in snakemake.output},  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    config=snakemake.config,  # noqa: F821
    # From the config, not the spec: a changed limit must not make finished points rerun.
    time_limit_s=time_limit_s(snakemake.config, spec),  # noqa: F821
)
