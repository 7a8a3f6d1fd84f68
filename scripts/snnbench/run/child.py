"""The parent's part for families whose point is one child process writing result.json
(snn-training, snn-data): skip what cannot run here, run the child in the point's environment
in a scratch folder, and write the record, whatever happens (a crash, kill or time-out is
recorded as failed with the reason, as for PD14 points)."""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from snnbench import environments
from snnbench.environments import EnvironmentMissing
from snnbench.records import identity, provenance, record
from snnbench.run import supervise


def resources(spec: dict, mem_mb: int) -> dict:
    """A single-process point's resources for the execute rule: one task on one node with the
    point's threads, and one GPU for a cuda point."""
    threads = spec["resources"]["threads"]
    return {
        "threads": threads,
        "mem_mb": mem_mb,
        "nodes": 1,
        "tasks": 1,
        "tasks_per_node": None,
        "cpus_per_task": threads,
        "mpi": None,
        "gpu": 1 if spec["device"] == "cuda" else 0,
    }


def run_child(module: str, environment: str, spec_path: Path, log_path: Path, time_limit_s: float, threads: int):
    """`python -m <module> SPEC SCRATCH` in the environment; returns the result.json it wrote."""
    with tempfile.TemporaryDirectory(prefix="snnbench-") as tmp:
        try:
            python = environments.python(environment)
        except EnvironmentMissing as missing:
            raise supervise.PointFailed(str(missing)) from None
        supervise.run_child([python, "-m", module, str(spec_path), tmp], Path(log_path), time_limit_s, threads)
        result_path = Path(tmp) / "result.json"
        if not result_path.exists():
            raise supervise.PointFailed("the run wrote no result.json")
        return json.loads(result_path.read_text())


def run_point(
    spec_path: Path,
    record_path: Path,
    log_path: Path,
    time_limit_s: float,
    *,
    skip_reason: Callable[[dict], str | None],
    environment: str,
    module: str,
    section: str,
    keys: tuple[str, ...],
    spec: dict | None = None,
) -> dict:
    """The point's record: skipped (with the reason) without a child, else the child's result
    under `section` (its `keys`) and what the child ran (benchmark_hash), ok, skipped by the child, or failed."""
    start = time.perf_counter()
    spec = spec or json.loads(Path(spec_path).read_text())
    rec = record.new(spec)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    reason = skip_reason(spec)
    if reason is not None:
        rec["status"], rec["failure"] = "skipped", {"reason": reason}
    else:
        try:
            result = run_child(module, environment, spec_path, log_path, time_limit_s, spec["resources"]["threads"])
            _fill(rec, result, section, keys, provenance.environment_key(spec, environment))
        except supervise.PointFailed as failure:
            rec["failure"] = {"reason": str(failure)}
    return _finish(rec, start, record_path, log_path)


def _fill(rec: dict, result: dict, section: str, keys: tuple[str, ...], env_key: str | None) -> None:
    """The child's result in the record, and what it ran in the environment of env_key (None: not known)."""
    rec[section] = {k: result[k] for k in keys if k in result}
    rec["provenance"].update(identity.claim([result.get("identity")], env_key))
    if result["status"] == "skipped":
        rec["status"], rec["failure"] = "skipped", {"reason": result["reason"]}
    else:
        rec["status"] = "ok"


def _finish(rec: dict, start: float, record_path: Path, log_path: Path) -> dict:
    rec["wall_time_s"] = time.perf_counter() - start
    record.write(rec, Path(record_path))
    with open(log_path, "a") as log:
        log.write(
            f"[snnbench] status {rec['status']}" + (f": {rec['failure']['reason']}\n" if rec["failure"] else "\n")
        )
    return rec


def import_run(
    spec: dict,
    run_dir: Path,
    record_path: Path,
    log_path: Path,
    *,
    section: str,
    keys: tuple[str, ...],
) -> dict:
    """The record of a point whose child ran outside the workflow (`python -m <module> SPEC DIR` on
    another machine, snnbench.results.import_runs) from the result.json it left in run_dir, else failed with
    the last line of run_dir/log.txt."""
    start = time.perf_counter()
    rec = record.new(spec)
    result_path = Path(run_dir) / "result.json"
    result = json.loads(result_path.read_text()) if result_path.exists() else None
    environment = (result or {}).get("environment")
    rec["provenance"] = provenance.ran_elsewhere(rec["provenance"], run_dir, None, environment)
    if result is None:
        rec["failure"] = {"reason": f"the run wrote no result.json; {supervise.run_end(run_dir)}"}
    else:
        # None: the child ran in an environment of another machine, which this process cannot name.
        _fill(rec, result, section, keys, None)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    return _finish(rec, start, record_path, log_path)
