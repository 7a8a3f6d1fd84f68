"""Every preset in config/experiments/ dry-runs (`snakemake -n --profile profiles/local --configfile
<preset>`) in a fresh copy of the workflow, as a newcomer's first command would (issue: presets that do
not dry-run). A preset made for another machine (a GPU, a cluster) may warn that the run would be
refused here (snnbench.planning.before_jobs.unplaceable_here); its dry run still plans every job. A
network description not made yet, or cut short, leaves its points' memory request to be determined
(<TBD>) instead of stopping the dry run.

The presets are dry-run two at a time, each half in its own copy (about 2-4 s each: ~1 min in all on
two cores)."""

from __future__ import annotations

import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import REPO, VENV_BIN, copy_workflow

pytestmark = pytest.mark.slow

PRESETS = sorted(path.name for path in (REPO / "config" / "experiments").glob("*.yaml"))
WORKERS = 2
DESCRIPTION = "networks/multi_area_model/N0.01_K0.01_ground_V1+V2/description.json"


def dry_run(workdir: Path, preset: str) -> subprocess.CompletedProcess:
    command = [str(VENV_BIN / "snakemake"), "-n", "--profile", "profiles/local", "--configfile"]
    return subprocess.run(
        [*command, f"config/experiments/{preset}"], cwd=workdir, capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    copies = [copy_workflow(tmp_path_factory.mktemp(f"presets-{i}")) for i in range(WORKERS)]

    def share(i: int) -> dict[str, subprocess.CompletedProcess]:
        return {preset: dry_run(copies[i], preset) for preset in PRESETS[i::WORKERS]}

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return {preset: proc for found in pool.map(share, range(WORKERS)) for preset, proc in found.items()}


def test_there_are_presets():
    assert len(PRESETS) >= 29 and "mam-ci.yaml" in PRESETS and "tiny.yaml" in PRESETS


@pytest.mark.parametrize("preset", PRESETS)
def test_each_preset_dry_runs_in_a_fresh_copy(dry_runs, preset):
    proc = dry_runs[preset]
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{preset}: {output[-3000:]}"
    assert "This was a dry-run" in output and "Exception" not in output and "Traceback" not in output


def test_a_multi_area_derive_cut_short_is_named_and_the_dry_run_plans(workflow_copy):
    """A dry run changes nothing: the description is named (a run sets it aside and derives it again)."""
    description = workflow_copy / DESCRIPTION
    description.parent.mkdir(parents=True)
    description.write_text('{"parameters": {"neuron_scale": 0.01, "indegree_scale": 0.01, "state": "gro')
    proc = dry_run(workflow_copy, "mam-ci.yaml")
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    named = [line for line in output.splitlines() if DESCRIPTION in line and "damaged" in line]
    assert named == [
        f"{DESCRIPTION} is damaged (Unterminated string starting at: line 1, column 72); would be set aside, made "
        "again before a point reads it"
    ]
    assert "mem_mb=<TBD>" in output and description.exists()
