"""What the parent of an snn-training point needs (snnbench.run.child runs the point as for snn-data).

The parent runs in the workflow's environment (no torch). It decides first whether the point
can run here at all (a framework documented as unavailable, a CUDA-only framework on CPU, an
`index` loop for a library that loops itself, a cuda point on a machine without an NVIDIA GPU):
such points are recorded with status `skipped` and the reason, without starting a child.
Otherwise the child (`python -m snnbench.training.run`, the framework's environment) times the
point; a crash, kill or time-out is recorded as `failed` with the reason, as for PD14 points.
"""

from __future__ import annotations

from snnbench import environments
from snnbench.machine import gpu
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
