"""What SLURM granted a point's job, read back inside the job, against what the point asked for
beyond its shape (config `slurm:` exclusive and threads_per_core: snnbench.planning.slurm_request).

A job may get less than it asked without failing: a partition's OverSubscribe=FORCE overrides
--exclusive, a site's flags may undo ours. The record keeps both (provenance.slurm.asked and
.granted) and points.csv says where they differ (slurm_grant_problems, grant_problems()).
"""

from __future__ import annotations

import json
import os
import subprocess

# The job's wrapper learns what was asked from its execute job (scripts/execute_point.py), as JSON:
# the config is the job's, and the spec must not hold it (changing it must not rerun finished points).
ASKED_VARIABLE = "SNNBENCH_SLURM_ASKED"
TIMEOUT_S = 30


def asked_environment(asked: dict) -> dict[str, str]:
    return {ASKED_VARIABLE: json.dumps(asked, sort_keys=True)}


def asked_here(environ=os.environ) -> dict | None:
    """What this job asked for (asked_environment's), or None where it was not said."""
    text = environ.get(ASKED_VARIABLE)
    try:
        return json.loads(text) if text else None
    except json.JSONDecodeError:
        return None


def _scontrol_fields(argv: list[str], run=subprocess.run) -> list[dict[str, str]]:
    """`scontrol -o` records (one line each) as field dicts; [] where scontrol cannot tell."""
    try:
        out = run(["scontrol", *argv], capture_output=True, text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [dict(item.split("=", 1) for item in line.split() if "=" in item) for line in out.stdout.splitlines()]


def _int(text) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _node_topology(node_list: str | None, run=subprocess.run) -> dict:
    """Sockets, cores per socket and threads per core of the job's nodes (the largest where they differ)."""
    nodes = _scontrol_fields(["show", "node", "-o", node_list], run) if node_list else []
    topology = {}
    for key, field in (
        ("sockets", "Sockets"),
        ("cores_per_socket", "CoresPerSocket"),
        ("threads_per_core", "ThreadsPerCore"),
    ):
        values = [v for node in nodes if (v := _int(node.get(field))) is not None]
        topology[key] = max(values) if values else None
    return topology


def _other_jobs(job_id: str, node_list: str | None, run=subprocess.run) -> list[str] | None:
    """The other jobs running on the job's nodes as it starts (a snapshot); None if not read."""
    if not node_list:
        return None
    try:
        out = run(
            ["squeue", "-h", "-t", "RUNNING", "-w", node_list, "-o", "%i"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return sorted(job for job in out.stdout.split() if job.split("_")[0] != job_id)


def granted(job_id: str, job: dict[str, str], environ=os.environ, run=subprocess.run) -> dict:
    """What SLURM gave the job (job: its `scontrol show job -o` fields; environ's SLURM_* where
    scontrol said nothing): nodes, CPUs in all and per task, whole cores, whether other jobs may share
    its nodes (OverSubscribe, formerly Shared: NO = not shared) and those running there as it started,
    the nodes' topology, and the threads per core its tasks may use (the node's, capped by the job's
    --threads-per-core: the T of ReqB:S:C:T)."""
    node_list = job.get("NodeList") or environ.get("SLURM_JOB_NODELIST")
    topology = _node_topology(node_list, run)
    cpus = _int(job.get("NumCPUs"))
    oversubscribe = job.get("OverSubscribe") or job.get("Shared")
    node_threads = topology["threads_per_core"]
    asked_threads = _int((job.get("ReqB:S:C:T") or "").rpartition(":")[2])
    threads = min(t for t in (node_threads, asked_threads) if t) if node_threads or asked_threads else None
    return {
        "nodes": _int(job.get("NumNodes") or environ.get("SLURM_JOB_NUM_NODES")),
        "node_list": node_list,
        "cpus": cpus,
        "cpus_per_task": _int(job.get("CPUs/Task") or environ.get("SLURM_CPUS_PER_TASK")),
        "cores": cpus // node_threads if cpus and node_threads else None,
        "oversubscribe": oversubscribe,
        "shared": None if oversubscribe is None else oversubscribe.upper() != "NO",
        "other_jobs": _other_jobs(job_id, node_list, run),
        "node_sockets": topology["sockets"],
        "node_cores_per_socket": topology["cores_per_socket"],
        "node_threads_per_core": node_threads,
        "threads_per_core": threads,
    }


def grant_problems(asked: dict | None, granted: dict | None) -> str:
    """Where the job did not get what it asked for, in words ("" where it did, or nothing was asked):
    a node that other jobs may share or did share as it started although whole nodes were asked,
    more threads per core than asked, and what could not be read back to tell."""
    if not asked or not granted:
        return ""
    problems = []
    if asked.get("exclusive"):
        if granted.get("shared") or granted.get("other_jobs"):
            others = granted.get("other_jobs")
            problems.append("shared node" + (f" (jobs {', '.join(others)} on it)" if others else ""))
        elif granted.get("shared") is None:
            problems.append("node sharing not read back")
    wanted = asked.get("threads_per_core")
    if wanted:
        got = granted.get("threads_per_core")
        if got is None:
            problems.append("threads per core not read back")
        elif got > wanted:
            problems.append(f"{got} threads per core")
    return "; ".join(problems)
