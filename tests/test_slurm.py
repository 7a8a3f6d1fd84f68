"""profiles/slurm on a real one-node SLURM cluster (tests/slurm/cluster.sh): every point a SLURM
job of its shape through the official executor plugin, MPI ranks via srun, failures recorded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import DEFAULT_FIGURES, REPO, TINY, VENV_BIN, copy_workflow

pytestmark = pytest.mark.slow

CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
# Poll the scheduler every few seconds instead of the profile's site-friendly defaults.
FAST_POLLING = ["--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2"]


def point(experiment: str, ranks: int, threads: int) -> str:
    return f"results/{experiment}/nest/nodes1_ranks{ranks}_threads{threads}/N0.02_K0.1/seed1"


def slurm_snakemake(workdir: Path, configfile: str, *args: str, check=True, **popen) -> subprocess.CompletedProcess:
    command = [str(VENV_BIN / "snakemake"), "--profile", "profiles/slurm", "--configfile", configfile, *FAST_POLLING]
    proc = subprocess.run([*command, *args], cwd=workdir, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def sacct_state(job_id: str) -> str:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", job_id, "-o", "State"], capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root (daemons, /etc/slurm)")
    # On a fresh machine SLURM is not installed yet: cluster.sh installs it.
    scontrol = shutil.which("scontrol")
    was_running = scontrol is not None and subprocess.run([scontrol, "ping"], capture_output=True).returncode == 0
    subprocess.run([str(CLUSTER), "start"], check=True, capture_output=True)
    yield
    if not was_running:
        subprocess.run([str(CLUSTER), "stop"], capture_output=True)


@pytest.fixture(scope="module")
def shapes_run(cluster, tmp_path_factory):
    if not (REPO / ".venv-nest-mpi" / ".installed").exists():
        pytest.skip("MPI-capable NEST missing: run `make env-nest-mpi` (make test does)")
    workdir = copy_workflow(tmp_path_factory.mktemp("slurm"))
    config = {
        "experiments": [
            dict(TINY, name="slurm-threads", resources={"threads_per_rank": [1, 2]}),
            dict(TINY, name="slurm-ranks", resources={"ranks_per_node": [2], "threads_per_rank": [1]}),
            dict(
                TINY,
                name="slurm-timeout",
                resources={"threads_per_rank": [1]},
                pd14=dict(TINY["pd14"], t_sim_ms=200_000),
                time_limit_min=0.05,
            ),
        ]
    }
    (workdir / "config" / "slurm.yaml").write_text(yaml.safe_dump(config))
    slurm_snakemake(workdir, "config/slurm.yaml")
    return workdir


def test_each_point_is_a_slurm_job_of_its_shape(shapes_run):
    workdir = shapes_run
    records = {
        p: json.loads((workdir / p / "record.json").read_text())
        for p in (point("slurm-threads", 1, 1), point("slurm-threads", 1, 2), point("slurm-ranks", 2, 1))
    }
    jobs = [rec["provenance"]["slurm"]["job_id"] for rec in records.values()]
    assert len(set(jobs)) == 3 and all(sacct_state(job) == "COMPLETED" for job in jobs)
    for path, rec in records.items():
        assert rec["status"] == "ok", (path, rec["failure"])
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"]
        threads = rec["point"]["resources"]["threads_per_rank"]
        assert rec["provenance"]["slurm"]["cpus_per_task"] == str(threads)
        assert rec["provenance"]["slurm"]["partition"] == "debug" and rec["provenance"]["slurm"]["node_list"]
        assert [r["threads"] for r in rec["ranks"]] == [threads] * rec["point"]["resources"]["ranks"]

    mpi = records[point("slurm-ranks", 2, 1)]
    assert [r["rank"] for r in mpi["ranks"]] == [0, 1] and {r["num_ranks"] for r in mpi["ranks"]} == {2}
    assert mpi["simulator"]["have_mpi"] and "Open MPI" in mpi["simulator"]["mpi_library"]
    assert mpi["provenance"]["slurm"]["ntasks"] == "2"


def test_time_limit_is_recorded_and_tables_complete(shapes_run):
    workdir = shapes_run
    rec = json.loads((workdir / point("slurm-timeout", 1, 1) / "record.json").read_text())
    assert rec["status"] == "failed" and "exceeded its time limit" in rec["failure"]["reason"]
    assert sacct_state(rec["provenance"]["slurm"]["job_id"]) == "COMPLETED"  # recorded before SLURM stepped in
    table = pd.read_csv(workdir / "results/points.csv")
    assert sorted(zip(table["experiment"], table["status"], strict=True)) == [
        ("slurm-ranks", "ok"),
        ("slurm-threads", "ok"),
        ("slurm-threads", "ok"),
        ("slurm-timeout", "failed"),
    ]
    assert table["slurm_job_id"].notna().all()
    assert all((workdir / f"results/slurm-ranks/figures/{name}.png").exists() for name in DEFAULT_FIGURES)


def test_cancelled_point_is_failed_and_reruns_alone(cluster, tmp_path):
    workdir = copy_workflow(tmp_path)
    config = {
        "experiments": [
            dict(
                TINY, name="slurm-cancel", resources={"threads_per_rank": [1]}, pd14=dict(TINY["pd14"], t_sim_ms=8000)
            ),
            dict(TINY, name="slurm-other", resources={"threads_per_rank": [1]}),
        ]
    }
    (workdir / "config" / "cancel.yaml").write_text(yaml.safe_dump(config))
    log = workdir / "logs/execute/slurm-cancel/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log"
    command = [str(VENV_BIN / "snakemake"), "--profile", "profiles/slurm", "--configfile", "config/cancel.yaml"]
    run = subprocess.Popen([*command, *FAST_POLLING], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 180
    while not (log.exists() and "running:" in log.read_text()) and time.time() < deadline:
        time.sleep(0.5)
    jobs = subprocess.run(["squeue", "-h", "-o", "%i %k"], capture_output=True, text=True).stdout.splitlines()
    job = next(line.split()[0] for line in jobs if "slurm-cancel" in line)
    subprocess.run(["scancel", job], check=True)
    output = run.communicate(timeout=300)[0].decode()
    assert run.returncode != 0, output[-3000:]

    cancelled = json.loads((workdir / point("slurm-cancel", 1, 1) / "record.json").read_text())
    assert cancelled["status"] == "failed" and "SLURM" in cancelled["failure"]["reason"], cancelled["failure"]
    other = json.loads((workdir / point("slurm-other", 1, 1) / "record.json").read_text())
    assert other["status"] == "ok"  # the rest completed
    assert (workdir / "results/slurm-other/points.csv").exists()

    # Rerunning that point alone succeeds; the next full run makes the tables and redoes nothing else.
    target = f"{point('slurm-cancel', 1, 1)}/record.json"
    other_mtime = (workdir / point("slurm-other", 1, 1) / "record.json").stat().st_mtime_ns
    slurm_snakemake(workdir, "config/cancel.yaml", "--forcerun", target, target)
    rerun = json.loads((workdir / target).read_text())
    assert rerun["status"] == "ok" and rerun["provenance"]["slurm"]["job_id"] != job
    slurm_snakemake(workdir, "config/cancel.yaml")
    assert list(pd.read_csv(workdir / "results/slurm-cancel/points.csv")["status"]) == ["ok"]
    assert (workdir / point("slurm-other", 1, 1) / "record.json").stat().st_mtime_ns == other_mtime
