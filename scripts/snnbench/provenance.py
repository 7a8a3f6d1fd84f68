"""Where, when, with what and from which workflow version a point ran."""

from __future__ import annotations

import datetime
import hashlib
import os
import platform
import shutil
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(__file__).resolve().parent

# Packages whose versions go into every record (where installed in the running environment).
PACKAGES = ("nest-simulator", "numpy", "pandas", "snakemake", "mpi4py", "brian2", "brian2genn", "brian2cuda", "pynn")
# Variables that shape threading, MPI and scheduling.
ENV_PREFIXES = ("OMP_", "MKL_", "OPENBLAS_", "GOMP_", "KMP_", "SLURM_", "OMPI_", "PMIX_", "NEST_")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def workflow_version() -> dict:
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}


def benchmark_hash(simulator: str) -> str:
    """Hash of the code that defines the benchmark (model parameters, driver, backend): two
    records with the same hash ran the same benchmark, whatever the workflow commit."""
    files = [PACKAGE / "pd14.py", PACKAGE / "simulate.py", PACKAGE / "simulators" / f"{simulator.replace('-', '_')}.py"]
    from snnbench.simulators import SIMULATORS

    if simulator in SIMULATORS:  # simulators that share a backend module (brian2-cpp, brian2-genn, ...)
        module = SIMULATORS[simulator].backend.split(":")[0]
        files.append(PACKAGE.parent / (module.replace(".", "/") + ".py"))
    digest = hashlib.sha256()
    for f in files:
        if f.exists():
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def training_benchmark_hash() -> str:
    """benchmark_hash of the snn-training family: its neuron spec, reference, builders, timing and driver."""
    digest = hashlib.sha256()
    for name in ("spec.py", "lif.py", "models.py", "timing.py", "sanity.py", "run.py"):
        digest.update((PACKAGE / "training" / name).read_bytes())
    return digest.hexdigest()[:16]


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
    }
    info = {"job_id": job_id}
    for key, (field, variable) in keys.items():
        info[key] = fields.get(field) or (os.environ.get(variable) if variable else None)
    return info


def gpus() -> list[dict] | None:
    """The GPUs nvidia-smi sees (model, driver, memory), or None without nvidia-smi or GPU.
    Under SLURM it sees the GPUs allocated to the job."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    fields = ["index", "name", "driver_version", "memory.total", "uuid"]
    try:
        out = subprocess.run(
            [smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    rows = [dict(zip(fields, (v.strip() for v in line.split(",")), strict=False)) for line in out.stdout.splitlines()]
    return [
        {
            "index": r["index"],
            "name": r["name"],
            "driver": r["driver_version"],
            "memory_mb": r["memory.total"],
            "uuid": r["uuid"],
        }
        for r in rows
    ] or None


def collect(spec: dict) -> dict:
    """Provenance of the machine and environment this process runs in."""
    from snnbench.config import canonical_hash

    return {
        "spec_hash": canonical_hash(spec),
        "started_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "workflow": workflow_version(),
        "benchmark_hash": (
            training_benchmark_hash() if spec.get("model_name") == "snn-training" else benchmark_hash(spec["simulator"])
        ),
        "python": {"version": platform.python_version(), "executable": sys.executable},
        "packages": package_versions(),
        "host": {
            "hostname": socket.gethostname(),
            "platform": platform.platform(),
            "cpu_model": cpu_model(),
            "logical_cpus": os.cpu_count(),
            "usable_cpus": len(os.sched_getaffinity(0)),
            "load_average_1_5_15": list(os.getloadavg()),
        },
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)},
        "slurm": slurm(),
        # Only for points that use GPUs (calling nvidia-smi costs time): all GPUs, and the first.
        **({"gpus": (found := gpus()), "gpu": (found or [None])[0]} if spec["resources"].get("gpus") else {}),
    }
