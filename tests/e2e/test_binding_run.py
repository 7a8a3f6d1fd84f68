"""Binding through the workflow on this machine (profiles/local): a 2-thread point bound to cores and
one not bound, what each run got in its record, points.csv and provenance.html; a binding this
machine cannot give refused before any job."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake
from snnbench.machine import affinity

pytestmark = pytest.mark.slow

POINT = "results/{}/nest/nodes1_ranks1_threads2/N0.02_K0.1/seed1"
EXPERIMENTS = [
    dict(TINY, name="pinned", binding="cores", resources={"threads_per_rank": [2]}),
    dict(TINY, name="unpinned", binding="none", resources={"threads_per_rank": [2]}),
]


@pytest.fixture(scope="module")
def binding_run(tmp_path_factory):
    if affinity.usable_cores()[0] < 2:
        pytest.skip("a 2-thread point bound to cores needs 2 cores")
    workdir = copy_workflow(tmp_path_factory.mktemp("binding"))
    (workdir / "config" / "binding.yaml").write_text(yaml.safe_dump({"experiments": EXPERIMENTS}))
    snakemake(workdir, "--configfile", "config/binding.yaml")
    return workdir


def record(workdir, experiment: str) -> dict:
    return json.loads((workdir / POINT.format(experiment) / "record.json").read_text())


def test_threads_of_a_local_point_are_on_distinct_cores(binding_run):
    rec = record(binding_run, "pinned")
    assert rec["status"] == "ok", rec["failure"]
    binding = rec["binding"]
    assert binding["launch"] == "one process, no launcher; OMP_PROC_BIND=close OMP_PLACES=cores"
    # NEST's two OpenMP threads (the rank's main thread and its worker), each allowed on one CPU as
    # the kernel said during simulate, on two different cores; each ran on its CPU.
    threads = binding["threads"]
    assert [t["thread"] for t in threads] == [0, 1] and threads[0]["tid"] == rec["ranks"][0]["binding"]["pid"]
    assert all(len(t["cpus"]) == 1 and t["last_cpu"] == t["cpus"][0] and t["cpu_s"] > 0 for t in threads), threads
    assert threads[0]["cores"] != threads[1]["cores"]
    assert binding["obtained"] == "pinned" and binding["problems"] == []


def test_threads_not_bound_may_run_on_every_cpu(binding_run):
    rec = record(binding_run, "unpinned")
    assert rec["status"] == "ok", rec["failure"]
    assert rec["binding"]["launch"] == "one process, no launcher; OMP_PROC_BIND=false"
    cpus = sorted(rec["ranks"][0]["binding"]["cpus"])  # what the process was given
    assert [t["cpus"] for t in rec["binding"]["threads"]] == [cpus, cpus] and rec["binding"]["obtained"] == "unpinned"


def test_binding_columns_are_in_points_csv_and_provenance(binding_run):
    table = pd.read_csv(binding_run / "results" / "points.csv").set_index("experiment")
    assert table.loc["pinned", "binding"] == "cores" and table.loc["pinned", "binding_obtained"] == "pinned"
    assert table.loc["unpinned", "binding"] == "none" and table.loc["unpinned", "binding_obtained"] == "unpinned"
    cpus = record(binding_run, "pinned")["binding"]["threads"]
    assert table.loc["pinned", "binding_cpus"] == f"r0t0:{cpus[0]['cpus'][0]} r0t1:{cpus[1]['cpus'][0]}"
    assert table.loc["pinned", "binding_last_cpus"].startswith("r0t0:")
    html = (binding_run / "results" / "pinned" / "provenance.html").read_text()
    assert "asked cores (one process, no launcher; OMP_PROC_BIND=close OMP_PLACES=cores): pinned; r0t0 CPUs" in html


def test_a_binding_this_machine_cannot_give_is_refused_before_any_job(workflow_copy):
    cores, _ = affinity.usable_cores()
    too_many = dict(TINY, name="too-many", resources={"threads_per_rank": [cores + 1]})  # the site default: cores
    (workflow_copy / "config" / "big.yaml").write_text(yaml.safe_dump({"experiments": [too_many]}))
    proc = snakemake(workflow_copy, "--configfile", "config/big.yaml", check=False)
    assert proc.returncode != 0
    assert "experiments[0].binding (too-many: cores): cores gives each thread a core of its own" in proc.stderr
    assert not (workflow_copy / "results" / "too-many").exists()
