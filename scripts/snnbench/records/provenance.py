"""Where, when, with what and from which workflow version a point ran."""

from __future__ import annotations

import datetime
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import snnbench
from snnbench import environments
from snnbench.environments import builds
from snnbench.hashing import canonical_hash
from snnbench.machine import gpu, hardware
from snnbench.paths import REPO
from snnbench.records import identity, slurm_grant

# Packages whose versions go into every record (where installed in the running environment).
PACKAGES = ("nest-simulator", "numpy", "pandas", "snakemake", "mpi4py", "brian2", "brian2genn", "brian2cuda", "pynn")
# Variables that shape threading, MPI and scheduling: recorded in provenance.environment.
RECORDED_VARIABLE_PREFIXES = (
    "OMP_",
    "MKL_",
    "OPENBLAS_",
    "GOMP_",
    "KMP_",
    "SLURM_",
    "OMPI_",
    "PMIX_",
    "NEST_",
    "CUDA_",
)


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def workflow_version() -> dict:
    """snnbench's release (pyproject.toml's version) and the checkout's commit: a release names many commits."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    try:
        version = snnbench.__version__
    except metadata.PackageNotFoundError:  # neither in a checkout nor installed: a record is still written
        version = None
    return {
        "version": version,
        "git_commit": commit,
        # The commit's own date (a history orders commits by it, not by when a point ran).
        "git_commit_utc": _git("log", "-1", "--format=%cI", "HEAD") if commit else None,
        "git_dirty": bool(status) if status is not None else None,
    }


def environment_key(spec: dict, environment: str) -> str:
    """The key of the environment a point runs in: its build's (for the site's modules, a hash of the
    modules it names), else that of its named environment (envs/<environment>.yaml)."""
    build = spec.get("build")
    if build:
        return build.get("key") or canonical_hash(builds.content(build))
    return environments.key(environment)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_versions(names=PACKAGES) -> dict[str, str]:
    """Versions of the named distributions installed in this environment (missing ones left out)."""
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def build_packages(build: dict, names=PACKAGES) -> dict[str, str]:
    """Versions of the named distributions in a build's environment (its pip freeze)."""
    wanted = {name.lower(): name for name in names}
    versions = {}
    for line in build.get("pip_freeze", []):
        name, _, version = line.partition("==")
        if name.lower().replace("_", "-") in wanted and version:
            versions[wanted[name.lower().replace("_", "-")]] = version
    return versions


def slurm() -> dict | None:
    """The SLURM job this runs in, from the scheduler itself (scontrol): the executor plugin strips
    most SLURM_* variables from MPI jobs' environments, so they cannot be relied on."""
    job_id = os.environ.get("SLURM_JOB_ID")
    if job_id is None:
        return None
    fields = {}
    try:
        out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True, timeout=30)
        fields = dict(item.split("=", 1) for item in out.stdout.split() if "=" in item)
    except (OSError, subprocess.TimeoutExpired):
        pass
    keys = {
        "node_list": ("NodeList", "SLURM_JOB_NODELIST"),
        "partition": ("Partition", "SLURM_JOB_PARTITION"),
        "nodes": ("NumNodes", "SLURM_JOB_NUM_NODES"),
        "ntasks": ("NumTasks", "SLURM_NTASKS"),
        "cpus_per_task": ("CPUs/Task", "SLURM_CPUS_PER_TASK"),
        "account": ("Account", "SLURM_JOB_ACCOUNT"),
        "time_limit": ("TimeLimit", None),
        "tres": ("TRES", None),  # what the job was given, GPUs (gres/gpu) included
    }
    info = {"job_id": job_id}
    for key, (field, variable) in keys.items():
        info[key] = fields.get(field) or (os.environ.get(variable) if variable else None)
    # What the point asked beyond its shape, and what SLURM gave (points.csv's slurm_grant_problems).
    info["asked"] = slurm_grant.asked_here()
    info["granted"] = slurm_grant.granted(job_id, fields)
    return info


def collect(spec: dict) -> dict:
    """Provenance of the machine and environment this process runs in; benchmark_hash not known until
    the point's processes report what they ran (snnbench.records.identity.claim)."""

    build = builds.provenance(spec)
    job = slurm()
    return {
        "machine": hardware.machine(socket.gethostname(), (job or {}).get("partition")),
        "spec_hash": canonical_hash(spec),
        "started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workflow": workflow_version(),
        **identity.claim([], None),
        "python": {"version": platform.python_version(), "executable": sys.executable},
        # A point of a build runs in the build's environment, not in this one: its packages.
        "packages": build_packages(build) if build else package_versions(),
        **({"build": build} if build else {}),
        "host": {
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "cpu_model": cpu_model(),
            "logical_cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)),
            "load_average_1_5_15": list(os.getloadavg()),
        },
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(RECORDED_VARIABLE_PREFIXES)},
        "slurm": job,
        # Only for points that use GPUs (calling nvidia-smi costs time): all GPUs, and the first.
        **({"gpus": (found := gpu.gpus()), "gpu": (found or [None])[0]} if spec["resources"].get("gpus") else {}),
    }


def ran_elsewhere(facts: dict, run_dir: Path, host: str | None, environment: dict | None) -> dict:
    """Provenance (collect()'s, gathered where the record is written) of a point whose child process ran
    on another machine without the workflow (snnbench.results.import_runs): what this process cannot know of that
    run says so, its host and environment come from what the run wrote, and `imported` says where from."""
    unknown = "not recorded: the point ran outside the workflow (snnbench.results.import_runs)"
    environment = environment or {}
    facts.pop("machine", None)
    facts.pop("gpus", None)
    facts.pop("gpu", None)
    return {
        **facts,
        "python": {"version": environment.get("python", unknown), "executable": environment.get("executable", unknown)},
        "packages": environment.get("packages") or {"note": unknown},
        # The keys every record's host has (readers rely on them), none of them known here but the name.
        "host": {**dict.fromkeys(facts["host"], unknown), "hostname": host or unknown},
        "environment": {"note": unknown},
        "slurm": None,
        "imported": {"from": str(run_dir), "imported_utc": facts["started_utc"], "by": "snnbench.results.import_runs"},
    }
