"""Snakemake entry (execute_<family>): run one point in its family's child process and write its
record, ok or failed (and the family's other outputs)."""

from pathlib import Path

from snnbench import families
from snnbench.jsonfile import read_json

spec_path = snakemake.input.spec  # noqa: F821 (provided by Snakemake)
family = families.of_spec(read_json(spec_path))
family.run_point(
    spec_path=spec_path,
    outputs={Path(path).name: path for path in snakemake.output},  # noqa: F821
    log_path=snakemake.log[0],  # noqa: F821
    config=snakemake.config,  # noqa: F821
)
