"""Points run outside the workflow (a GPU machine without Snakemake) come back as records: a real
NEST point run by its child process alone, and a run that was killed, imported with
`python -m snnbench.results.import_runs`; the workflow then counts them as done and collects them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import snakemake

pytestmark = pytest.mark.slow

POINTS = ["nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1", "nest/nodes1_ranks1_threads2/N0.02_K0.1/seed1"]


def _python(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=workdir, capture_output=True, text=True, timeout=600)


def test_runs_made_without_the_workflow_become_records_it_collects(workflow_copy):
    config = workflow_copy / "tiny.yaml"
    config.write_text((workflow_copy / "config/experiments/tiny.yaml").read_text())
    snakemake(workflow_copy, "--configfile", str(config), "--until", "configure_point")
    done, killed = (Path("results/tiny") / point for point in POINTS)
    runs = workflow_copy / "runs"
    # One point run by its child alone, as on a machine without Snakemake; another killed by `timeout`.
    ran = _python(workflow_copy, "-m", "snnbench.network.run", str(done / "spec.json"), str(runs / done))
    assert ran.returncode == 0, ran.stderr[-2000:]
    (runs / killed).mkdir(parents=True)
    (runs / killed / "log.txt").write_text("building the network ...\n")
    (runs / killed / "exit_status").write_text("124\n")

    args = ["-m", "snnbench.results.import_runs", "runs", "--configfile", str(config), "--gpu", "none (a CPU point)"]
    imported = _python(workflow_copy, *args)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert f"{done}: ok" in imported.stdout
    assert f"{killed}: failed: the run left 0 of 1 rank outputs; exit status 124; its log ends: building" in (
        imported.stdout
    )
    record = json.loads((workflow_copy / done / "record.json").read_text())
    assert record["status"] == "ok" and record["network"]["num_synapses"] == record["network"]["expected_synapses"]
    assert record["provenance"]["imported"]["from"] == str(runs / done)
    assert record["provenance"]["imported"]["gpu_as_stated"] == "none (a CPU point)"
    assert record["provenance"]["environment"]["note"].startswith("not recorded: the point ran outside")
    assert (workflow_copy / done / "hardware").is_dir() and (workflow_copy / done / "spikes.npz").exists()

    # Imported once: a second import leaves the records alone.
    before = (workflow_copy / done / "record.json").stat().st_mtime_ns
    again = _python(workflow_copy, *args)
    assert f"{done}: has a record already, left alone" in again.stdout
    assert (workflow_copy / done / "record.json").stat().st_mtime_ns == before

    # The workflow plans no execute job for them and collects both.
    planned = snakemake(workflow_copy, "--configfile", str(config), "-n")
    assert not re.search(r"^rule execute_point", planned.stdout, re.MULTILINE), planned.stdout[-3000:]
    snakemake(workflow_copy, "--configfile", str(config), "--keep-going", check=False)
    table = pd.read_csv(workflow_copy / "results/tiny/points.csv")
    assert sorted(table["status"]) == ["failed", "ok"]
