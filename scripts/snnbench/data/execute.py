"""Run one snn-data point in a fresh child process and write its record, whatever happens.

The parent runs in the workflow's environment (no torch, no tonic). A point that cannot run
here (a cuda device or the gpu strategy without a GPU) is recorded as skipped with the reason,
without a child. Otherwise the child (`python -m snnbench.data.run`, envs/tonic.yaml) runs it in
a scratch directory (its disk cache included, removed afterwards); a crash, kill or time-out is
recorded as failed with the reason, as for the other families.
"""

from __future__ import annotations

from pathlib import Path

from snnbench.data import spec as data_spec
from snnbench.machine import gpu
from snnbench.run import child

RESULT_KEYS = ("versions", "dataset", "device", "epochs", "summary", "memory", "trainable_parameters")


def skip_reason(spec: dict) -> str | None:
    present, why = gpu.present() if spec["device"] == "cuda" else (False, "")
    return data_spec.skip_reason(spec, present, why)


def run_point(spec_path: Path, record_path: Path, log_path: Path, time_limit_s: float, spec=None) -> dict:
    return child.run_point(
        spec_path,
        record_path,
        log_path,
        time_limit_s,
        spec=spec,
        skip_reason=skip_reason,
        environment=data_spec.ENVIRONMENT,
        module="snnbench.data.run",
        section="data",
        keys=RESULT_KEYS,
    )
