"""A head (`snakemake --profile profiles/slurm`) stopped halfway on the test cluster (tests/slurm/cluster.sh),
while its points' jobs are queued and running, then started again: no point runs twice. SIGTERM: the head waits
for its jobs and unlocks. SIGKILL (a lost login node): its jobs run on and its lock stays; the next head names
the lock with the command that clears it, and once unlocked waits for the earlier jobs before it plans
(snnbench.planning.earlier_head), then submits only the point left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from conftest import TINY, copy_workflow
from test_slurm import (  # noqa: F401 (the fixtures cluster and shared_dir)
    FAST_POLLING,
    cluster,
    point,
    sacct_state,
    shared_dir,
    snakemake_bin,
)

pytestmark = pytest.mark.slow

SEEDS = (1, 2, 3)
# Each point simulates 12 s, a job that outlasts a restart also on a loaded machine (at 6 s, jobs of ~50 s under
# load once ended before the next head planned: its lock check and unlock took as long; the whole test is ~50 s on
# an idle machine); the two nodes take two at a time (network points ask for whole nodes).
EXPERIMENT = dict(TINY, name="halfway", resources={"threads_per_rank": [1]}, seeds=list(SEEDS))
EXPERIMENT["pd14"] = dict(TINY["pd14"], t_sim_ms=12000)
# The points' records alone: what is at stake (no tables, figures or validation to wait for).
RECORDS = [f"{point('halfway', 1, 1).removesuffix('seed1')}seed{seed}/record.json" for seed in SEEDS]


def head_command(*args: str) -> list[str]:
    return [str(snakemake_bin()), *RECORDS, "--profile", "profiles/slurm", "--configfile", "config/h.yaml", *args]


def halfway_head(workdir: Path, stop: signal.Signals, *args: str) -> subprocess.Popen:
    """A head stopped by `stop` once two of its points run (in a session of its own, as a detached head)."""
    head = subprocess.Popen(
        head_command(*FAST_POLLING, *args),
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 180
    while len(running_logs(workdir)) < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert len(running_logs(workdir)) == 2, "the points' jobs did not start"
    os.killpg(head.pid, stop)
    return head


def running_logs(workdir: Path) -> list[Path]:
    logs = workdir / "logs" / "execute" / "halfway"
    return [p for p in logs.glob("**/seed*.log") if "running:" in p.read_text()] if logs.exists() else []


def records(workdir: Path) -> list[dict]:
    return [json.loads((workdir / path).read_text()) for path in RECORDS]


def assert_each_point_ran_once(workdir: Path) -> None:
    """Every job SLURM ran in this folder is a point's (the only rule not local), so as many jobs as points,
    each the job its point's record names, means no point ran twice."""
    listed = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-o", "JobID,JobName,State,Start,End,WorkDir"], capture_output=True, text=True
    )
    here = [line.split("|") for line in listed.stdout.splitlines() if line.endswith(f"|{workdir}")]
    print("\n".join("|".join(job[:5]) for job in here))  # the job list, shown with pytest -s
    done = records(workdir)
    assert all(rec["status"] == "ok" for rec in done), [rec.get("failure") for rec in done]
    ran = sorted(rec["provenance"]["slurm"]["job_id"] for rec in done)
    assert sorted(job[0] for job in here) == ran and len(set(ran)) == len(SEEDS), listed.stdout
    states = {job: sacct_state(job) for job in ran}
    assert Counter(states.values()) == {"COMPLETED": len(SEEDS)}, job_logs(workdir, states)


def job_logs(workdir: Path, states: dict[str, str]) -> str:
    """The executor plugin's log of each job that did not complete (.snakemake/slurm_logs), its end shown."""
    logs = {log.stem: log for log in (workdir / ".snakemake" / "slurm_logs").glob("**/*.log")}
    failed = [job for job, state in states.items() if state != "COMPLETED"]
    return "\n".join(
        f"job {job} {states[job]}:\n" + (logs[job].read_text()[-3000:] if job in logs else "(no log)") for job in failed
    )


def workflow(shared_dir, name: str) -> Path:  # noqa: F811 (the fixture imported above)
    workdir = copy_workflow(shared_dir(name))
    (workdir / "config" / "h.yaml").write_text(yaml.safe_dump({"experiments": [EXPERIMENT]}))
    return workdir


def test_a_head_stopped_by_sigterm_waits_for_its_jobs(cluster, shared_dir):  # noqa: F811
    workdir = workflow(shared_dir, "head-term")
    head = halfway_head(workdir, signal.SIGTERM, "--jobs", "2")  # the third point not yet submitted
    said = head.communicate(timeout=300)[0]
    assert "Will exit after finishing currently running jobs" in said, said[-3000:]
    again = subprocess.run(head_command(*FAST_POLLING), cwd=workdir, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    assert (again.stdout + again.stderr).count("has been submitted with SLURM jobid") == 1  # the point left
    assert_each_point_ran_once(workdir)


def test_a_head_killed_hard_leaves_its_jobs_to_the_next(cluster, shared_dir):  # noqa: F811
    workdir = workflow(shared_dir, "head-kill")
    head = halfway_head(workdir, signal.SIGKILL, "--jobs", "2")  # the third point not yet submitted
    head.communicate(timeout=60)
    locked = subprocess.run(head_command(*FAST_POLLING), cwd=workdir, capture_output=True, text=True, timeout=300)
    said = locked.stdout + locked.stderr
    assert locked.returncode != 0 and "LockException" in said, said[-3000:]
    assert f"clear it with: {' '.join(head_command(*FAST_POLLING))} --unlock" in said, said[-3000:]
    unlock = subprocess.run(head_command("--unlock"), cwd=workdir, capture_output=True, text=True, timeout=300)
    assert unlock.returncode == 0, (unlock.stdout + unlock.stderr)[-3000:]

    again = subprocess.run(head_command(*FAST_POLLING), cwd=workdir, capture_output=True, text=True, timeout=600)
    said = again.stdout + again.stderr
    assert again.returncode == 0, said[-3000:]
    assert "SLURM jobs of an earlier head are still queued or running in this folder" in said, said[-3000:]
    assert "their points are not run again" in said and said.count("has been submitted with SLURM jobid") == 1
    assert_each_point_ran_once(workdir)
