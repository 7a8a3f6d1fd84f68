"""What PyGeNN's builders share: the backends by simulator name, options, timers and preferences, GeNN's
delay in whole steps (a snippet and its parameters, the dendritic delay buffer), the recording buffer's
steps and the build cache."""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from snnbench.network.models import pd14

# PyGeNN backend by simulator name.
GENN_BACKENDS = {"genn": "cuda", "genn-cpu": "single_threaded_cpu"}
# Threads per presynaptic spike of procedural connectivity on the GPU: 8 unless the config says
# (genn.procedural_threads_per_spike), the value of GeNN's own PD14 example
# (userproject/potjans_microcircuit.py, GeNN 5.4.0). Not in the config schema's defaults, so that
# specs made before the option existed stay unchanged (finished points are not rerun).
DEFAULT_OPTIONS = {
    "procedural_connectivity": False,
    "procedural_threads_per_spike": 8,
    "precision": "float",
    "neuron_model": "LIF",
}
# Delays are redrawn below dt/2 (NEST's bound) and, for GeNN's fixed-size delay buffer, above
# mean + 8 sd: a draw beyond that has probability < 1e-15, so in practice the distribution is
# NEST's unbounded one.
DELAY_BOUND_SD = 8.0
# GeNN's timers (seconds, cumulative): the runtime's names, readable once the model is loaded.
GENN_TIMERS = (
    "init_time",
    "init_sparse_time",
    "neuron_update_time",
    "presynaptic_update_time",
    "postsynaptic_update_time",
    "synapse_dynamics_time",
)
# The CUDA backend's device and block sizes, chosen by hand: GeNN's optimiser (OPTIMAL device,
# OCCUPANCY block sizes) crashed PyGeNN 5.4 with CUDA 13.0 on an H100 (driver 580.159.04,
# 2026-11-25: a segfault while the backend is created). The point's GPU is device 0 of those
# SLURM (or CUDA_VISIBLE_DEVICES) gives it; the block sizes are GeNN's manual defaults.
CUDA_PREFERENCES = {"device_select_method": "MANUAL", "manual_device_id": 0, "block_size_select_method": "MANUAL"}
BUILD_CACHE_ENV = "SNNBENCH_BUILD_CACHE"  # as Brian2's standalone builds (brian2.build_cache)

# PD14's delay in whole steps, at least one, as GeNN's dendritic delay: a spike of step x with
# dendritic delay d first moves its target's V in step x + 1 + d, as NEST's with a delay of d steps
# (tests/e2e/test_genn.py checks it).
DELAY_SNIPPET_CODE = """
scalar steps;
do {
    steps = meanSteps + gennrand_normal() * sdSteps;
} while (steps < minSteps || steps > maxSteps);
value = fmax(rint(steps), 1.0);
"""


def delay_params(mean_ms: float, sd_ms: float, dt_ms: float = pd14.DT_MS, min_steps: float = 0.5) -> dict[str, float]:
    """The delay snippet's parameters, in time steps (min_steps: the bound below which a draw is redrawn)."""
    return {
        "meanSteps": mean_ms / dt_ms,
        "sdSteps": sd_ms / dt_ms,
        "minSteps": min_steps,
        "maxSteps": (mean_ms + DELAY_BOUND_SD * sd_ms) / dt_ms,
    }


def delay_slots(projections: list[dict], dt_ms: float) -> int:
    """Slots of GeNN's dendritic delay buffer for the longest delay the snippet can draw (one
    value for every projection, so that GeNN can fuse their postsynaptic models)."""
    longest = max(delay_params(*p["delay"], dt_ms)["maxSteps"] for p in projections)
    return int(math.floor(longest + 0.5)) + 1  # delays 0 .. rint(longest)


def spike_steps(recorded_steps: np.ndarray, presim_steps: int, sim_steps: int) -> np.ndarray:
    """The time steps of spikes read from GeNN's recording buffer of `sim_steps` slots after
    presim_steps + sim_steps steps. GeNN writes step s into slot s % sim_steps and labels slot k
    as step presim_steps + k; the true step of slot k is presim_steps + (k - presim_steps) mod sim_steps."""
    slot = np.asarray(recorded_steps, dtype=np.int64) - presim_steps
    return presim_steps + np.mod(slot - presim_steps, sim_steps)


def build_key(spec: dict, environment: str) -> str:
    """What the generated code depends on: the model, the seed (compiled in), the simulator and its
    options, and the environment."""
    model = {
        k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in spec["model"].items()
    }
    key = {
        "simulator": spec["simulator"],
        "model": model,
        "seed": spec["seed"],
        "options": spec.get("simulator_options", {}),
        "environment": environment,
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def build_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "pygenn"
    return Path(os.environ.get(BUILD_CACHE_ENV, default))
