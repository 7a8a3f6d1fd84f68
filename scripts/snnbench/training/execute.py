"""Run one snn-training point in a fresh child process and write its record, whatever happens.

The parent runs in the workflow's environment (no torch). It decides first whether the point
can run here at all (a framework documented as unavailable, a CUDA-only framework on CPU, an
`index` loop for a library that loops itself, a cuda point on a machine without an NVIDIA GPU):
such points are recorded with status `skipped` and the reason, without starting a child.
Otherwise the child (`python -m snnbench.training.run`, the framework's environment) times the
point; a crash, kill or time-out is recorded as `failed` with the reason, as for PD14 points.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from snnbench import environments, execute, gpu, record
from snnbench.environments import EnvironmentMissing
from snnbench.training import spec as training_spec


def environment_for(spec: dict) -> str:
    return training_spec.FRAMEWORKS[spec["simulator"]].environment


def python_for(spec: dict) -> str:
    """The interpreter of the framework's environment (.venv-<env>, or the running conda env)."""
    return environments.python(environment_for(spec))


def skip_reason(spec: dict) -> str | None:
    reason = training_spec.skip_reason(spec)
    if reason is None and spec["device"] == "cuda":
        present, why = gpu.present()
        if not present:
            reason = f"no GPU: {why}"
    return reason


def build_record(result: dict) -> dict:
    """The record's measurement sections from the child's result.json."""
    keys = ("framework", "device", "timing", "memory", "activity", "sanity", "trainable_parameters", "neuron")
    return {"training": {k: result[k] for k in keys if k in result}}


def run_point(spec_path: Path, record_path: Path, log_path: Path, time_limit_s: float) -> dict:
    start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text())
    rec = record.new(spec)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    reason = skip_reason(spec)
    if reason is not None:
        rec["status"], rec["failure"] = "skipped", {"reason": reason}
        with open(log_path, "a") as log:
            log.write(f"[snnbench] skipped: {reason}\n")
    else:
        with tempfile.TemporaryDirectory(prefix="snnbench-") as tmp:
            try:
                try:
                    python = python_for(spec)
                except EnvironmentMissing as missing:
                    raise execute.PointFailed(str(missing)) from None
                command = [python, "-m", "snnbench.training.run", str(spec_path), tmp]
                execute.run_child(command, Path(log_path), time_limit_s, spec["resources"]["threads"])
                result_path = Path(tmp) / "result.json"
                if not result_path.exists():
                    raise execute.PointFailed("the run wrote no result.json")
                result = json.loads(result_path.read_text())
                rec["training"] = build_record(result)["training"]
                if result["status"] == "skipped":
                    rec["status"], rec["failure"] = "skipped", {"reason": result["reason"]}
                else:
                    rec["status"] = "ok"
            except execute.PointFailed as failure:
                rec["failure"] = {"reason": str(failure)}
    rec["wall_time_s"] = time.perf_counter() - start
    record.write(rec, Path(record_path))
    with open(log_path, "a") as log:
        log.write(
            f"[snnbench] status {rec['status']}" + (f": {rec['failure']['reason']}\n" if rec["failure"] else "\n")
        )
    return rec
