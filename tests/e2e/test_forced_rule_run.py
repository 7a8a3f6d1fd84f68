"""End to end: `--forcerun <rule>` (a rule's name, not a file) while an environment is made again. The link
job that must run masks the forced point after it (snakemake/snakemake#4166): Snakemake ended "100% done"
with rc 0 and the point not run again. The run must end non-zero naming the point it did not redo.

A NEST point of 2 MPI ranks (it runs in this checkout's .venv-nest-mpi), run once for real; the forced runs
are --touch runs on an empty environment cache (nothing is built).
"""

from __future__ import annotations

import os

import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake
from snnbench import environments

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not environments.is_linked("nest-mpi"),
        reason="MPI-capable NEST missing: run `make env-nest-mpi` (make test does)",
    ),
]

POINT = "results/forced/nest/nodes1_ranks2_threads1/N0.02_K0.1/seed1"
EXPERIMENT = dict(
    TINY,
    name="forced",
    resources={"ranks_per_node": [2], "threads_per_rank": [1]},
    pd14={**TINY["pd14"], "t_sim_ms": 100},
)


def test_a_forced_rule_left_out_after_a_remade_link_ends_the_run_non_zero_naming_its_point(tmp_path):
    workdir = copy_workflow(tmp_path)
    (workdir / "config" / "forced.yaml").write_text(yaml.safe_dump({"experiments": [EXPERIMENT]}))
    snakemake(workdir, f"{POINT}/record.json", "--configfile", "config/forced.yaml")  # the point, finished
    # Snakemake's metadata of the link in this working directory (touched: nothing relinked), so that an
    # empty cache makes the link job run again.
    marker = str(environments.link_marker("nest-mpi"))
    snakemake(workdir, marker, "--forcerun", "link_environment", "--touch", "--configfile", "config/forced.yaml")
    env = dict(os.environ, **{environments.CACHE_ENV: str(tmp_path / "new-cache")})
    done = snakemake(
        workdir,
        f"{POINT}/record.json",
        *("--forcerun", "execute_point_pd14", "--touch", "--configfile", "config/forced.yaml"),
        env=env,
        check=False,
    )
    said = done.stdout + done.stderr
    assert "rule link_environment" in said and "rule execute_point_pd14" not in said  # Snakemake's mask
    assert done.returncode != 0, said[-3000:]
    assert f"The run ended without making 1 of its targets ({POINT})" in said
