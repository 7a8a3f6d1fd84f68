"""Run one snn-data point in a fresh child process and write its record, whatever happens.

The parent runs in the workflow's environment (no torch, no tonic). A point that cannot run
here (a cuda device or the gpu strategy without a GPU) is recorded as skipped with the reason,
without a child. Otherwise the child (`python -m snnbench.data.run`, envs/tonic.yaml) runs it in
a scratch directory (its disk cache included, removed afterwards); a crash, kill or time-out is
recorded as failed with the reason, as for the other families.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from snnbench import environments, execute, gpu, record
from snnbench.data import spec as data_spec
from snnbench.environments import EnvironmentMissing

RESULT_KEYS = ("versions", "dataset", "device", "epochs", "summary", "memory", "trainable_parameters")


def skip_reason(spec: dict) -> str | None:
    present, why = gpu.present() if spec["device"] == "cuda" else (False, "")
    return data_spec.skip_reason(spec, present, why)


def run_child(spec: dict, spec_path: Path, log_path: Path, time_limit_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="snnbench-data-") as tmp:
        try:
            python = environments.python(data_spec.ENVIRONMENT)
        except EnvironmentMissing as missing:
            raise execute.PointFailed(str(missing)) from None
        command = [python, "-m", "snnbench.data.run", str(spec_path), tmp]
        execute.run_child(command, Path(log_path), time_limit_s, spec["resources"]["threads"])
        result_path = Path(tmp) / "result.json"
        if not result_path.exists():
            raise execute.PointFailed("the run wrote no result.json")
        return json.loads(result_path.read_text())


def run_point(spec_path: Path, record_path: Path, log_path: Path, time_limit_s: float) -> dict:
    start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text())
    rec = record.new(spec)
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    reason = skip_reason(spec)
    if reason is not None:
        rec["status"], rec["failure"] = "skipped", {"reason": reason}
    else:
        try:
            result = run_child(spec, spec_path, log_path, time_limit_s)
            rec["data"] = {k: result[k] for k in RESULT_KEYS if k in result}
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
