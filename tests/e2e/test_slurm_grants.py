"""Whole nodes and one thread per core on the SLURM test cluster (tests/slurm/cluster.sh): what a
point's job asks beyond its shape (config slurm: exclusive, threads_per_core), what SLURM granted as
the job read it back (the record's provenance.slurm.granted), and a point that no node can hold at
one thread per core, refused before any job. Partition smt's node n3 is declared as one core of two
hardware threads; partition debug's n1 and n2 are those of tests/e2e/test_slurm.py."""

from __future__ import annotations

import json
import os
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow
from test_slurm import (  # noqa: F401 (the fixtures cluster and shared_dir)
    FAST_POLLING,
    cluster,
    point,
    sacct,
    sacct_state,
    shared_dir,
    slurm_snakemake,
    snakemake_bin,
)

pytestmark = pytest.mark.slow

ONE_THREAD_PER_CORE = {"partition": "smt", "threads_per_core": 1}


def smt_jobs() -> list[str]:
    """The jobs partition smt has run (this file's alone), as SLURM's accounting has them."""
    return subprocess.run(
        ["sacct", "-X", "-n", "-r", "smt", "-o", "JobID"], capture_output=True, text=True
    ).stdout.split()


@pytest.fixture(scope="module")
def grants_run(cluster, shared_dir):  # noqa: F811 (the fixtures imported above)
    """A 1-thread point at one thread per core on the SMT node, and one on a whole node of debug, at once."""
    workdir = copy_workflow(shared_dir("grants"))
    experiments = [
        dict(TINY, name="smt-one", resources={"threads_per_rank": [1]}, slurm=ONE_THREAD_PER_CORE),
        dict(TINY, name="whole-node", resources={"threads_per_rank": [1]}, slurm={"exclusive": True}),
    ]
    (workdir / "config" / "grants.yaml").write_text(yaml.safe_dump({"experiments": experiments}))
    slurm_snakemake(workdir, "config/grants.yaml")
    records = {
        name: json.loads((workdir / point(name, 1, 1) / "record.json").read_text())
        for name in ("smt-one", "whole-node")
    }
    return workdir, records


def test_one_thread_per_core_gets_one_core_of_the_smt_node(grants_run):
    workdir, records = grants_run
    rec = records["smt-one"]
    assert rec["status"] == "ok", rec["failure"]
    slurm = rec["provenance"]["slurm"]
    assert slurm["asked"] == {"exclusive": True, "threads_per_core": 1, "extra": ""}
    granted = slurm["granted"]
    # One core of two threads, its tasks on one of them; the node is the job's alone.
    assert granted["node_list"] == "n3" and granted["node_threads_per_core"] == 2, granted
    assert granted["cores"] == 1 and granted["threads_per_core"] == 1 and granted["cpus_per_task"] == 1, granted
    assert granted["shared"] is False and granted["other_jobs"] == [], granted
    assert sacct_state(slurm["job_id"]) == "COMPLETED"
    table = pd.read_csv(workdir / "results" / "smt-one" / "points.csv", keep_default_na=False)
    assert list(table["slurm_grant_problems"]) == [""]


def test_a_whole_node_of_an_existing_partition_is_not_shared(grants_run):
    workdir, records = grants_run
    rec = records["whole-node"]
    assert rec["status"] == "ok", rec["failure"]
    slurm = rec["provenance"]["slurm"]
    assert slurm["partition"] == "debug" and slurm["asked"]["exclusive"] is True
    granted = slurm["granted"]
    # Every CPU of the node (2 on the test cluster's nodes) for a 1-thread point, and no other job there.
    assert granted["oversubscribe"] == "NO" and granted["shared"] is False and granted["other_jobs"] == [], granted
    assert (
        granted["cpus"] == granted["node_sockets"] * granted["node_cores_per_socket"] * granted["node_threads_per_core"]
    )
    assert f"cpu={granted['cpus']}" in sacct(slurm["job_id"], "AllocTRES")
    table = pd.read_csv(workdir / "results" / "whole-node" / "points.csv", keep_default_na=False)
    assert list(table["slurm_grant_problems"]) == [""]


def test_two_threads_at_one_thread_per_core_on_one_core_are_refused_before_any_job(cluster, shared_dir):  # noqa: F811
    workdir = copy_workflow(shared_dir("smt-two"))
    two = dict(TINY, name="smt-two", resources={"threads_per_rank": [2]}, slurm=ONE_THREAD_PER_CORE)
    (workdir / "config" / "two.yaml").write_text(yaml.safe_dump({"experiments": [two]}))
    before = smt_jobs()
    proc = slurm_snakemake(workdir, "config/two.yaml", check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    line = (
        f"{point('smt-two', 1, 2)}: needs 2 CPUs on each of 1 node(s) at 1 thread(s) per core "
        "(slurm.threads_per_core), but partition smt has 0 such node(s): the largest, n3, has 1 usable "
        "(1 socket(s) x 1 core(s) x 2 thread(s), sinfo)"
    )
    assert line in said, said[-3000:]
    after = smt_jobs()
    assert after == before and not (workdir / point("smt-two", 1, 2)).exists()  # nothing submitted, nothing written


def test_where_the_plan_cannot_read_the_nodes_slurms_refusal_is_the_points_record(cluster, shared_dir, tmp_path):  # noqa: F811
    """With an sinfo that fails (as on a host that cannot reach slurmctld), the same 2-thread point is
    submitted; SLURM refuses it at once, and its record and table say so in SLURM's words. The job never
    ran, so the next run submits it again."""
    (tmp_path / "sinfo").write_text("#!/bin/sh\necho 'sinfo: error: slurmctld not reachable' >&2\nexit 1\n")
    (tmp_path / "sinfo").chmod(0o755)
    workdir = copy_workflow(shared_dir("smt-refused"))
    two = dict(TINY, name="smt-refused", resources={"threads_per_rank": [2]}, slurm=ONE_THREAD_PER_CORE)
    (workdir / "config" / "two.yaml").write_text(yaml.safe_dump({"experiments": [two]}))
    command = [str(snakemake_bin()), "--profile", "profiles/slurm", "--configfile", "config/two.yaml", *FAST_POLLING]
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    proc = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode != 0
    rec = json.loads((workdir / point("smt-refused", 1, 2) / "record.json").read_text())
    refusal = "sbatch: error: Batch job submission failed: Requested node configuration is not available"
    assert rec["status"] == "failed" and rec["wall_time_s"] is None
    assert rec["failure"]["reason"].startswith(f"SLURM refused the point's job at submission: {refusal} ("), rec
    table = pd.read_csv(workdir / "results" / "smt-refused" / "points.csv")
    assert list(table["status"]) == ["failed"] and refusal in table["failure_reason"].item()
    again = subprocess.run([*command, "-n"], cwd=workdir, capture_output=True, text=True, timeout=300, env=env)
    assert f"rule execute_point_pd14:\n    input: {point('smt-refused', 1, 2)}/spec.json" in again.stdout, again.stdout
