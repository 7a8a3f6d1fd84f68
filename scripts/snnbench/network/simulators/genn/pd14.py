"""PD14 on PyGeNN 5 (GeNN's Python interface): `genn` on the CUDA backend, `genn-cpu` on the
single-threaded CPU backend. The environment builds PyGeNN from GeNN's source (envs/pygenn.yaml).

The network is PD14 from `snnbench.network.models.pd14`, as every simulator builds it: GeNN's LIF
neurons (exact integration of iaf_psc_exp's membrane), exponential currents (GeNN's ExpCurr, whose
per-step current carries the same charge as NEST's jump-and-decay current), a fixed total number of
synapses per projection with sources and targets drawn with replacement (GeNN's
FixedNumberTotalWithReplacement), normal weights redrawn until they have the right sign, normal
delays redrawn below dt/2 and rounded to whole steps (at least one), optimized initial potentials,
and Poisson drive (GeNN's PoissonExp current source: K_ext sources at 8 Hz per neuron) or the
equivalent DC. GeNN draws all of it on the device from the point's seed (compiled into the model).
With `genn: {procedural_connectivity: true}` the connectivity, weights and delays are not stored
but regenerated from their seeds at every spike (GeNN's PROCEDURAL matrix type); the record's
`simulator.connectivity` says which was used.

Phases (the driver times each call): setup = import, model object; create = populations, drive,
recording; connect = the synapse populations' description (GeNN draws them later, on the device);
prepare = code generation and compilation (`build`) and allocation and initialisation on the device
(`load`); presimulate / simulate = stepping. GeNN's own timers (`timing_enabled`) split them:
init, sparse init, neuron update, presynaptic update; build, load and the copy of the spike
recording buffer are wall-clock timers around those calls.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from snnbench.machine.gpu import GpuMemoryPoller
from snnbench.network.models import pd14
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.records.provenance import package_versions

# PyGeNN backend by simulator name.
GENN_BACKENDS = {"genn": "cuda", "genn-cpu": "single_threaded_cpu"}
# Threads per presynaptic spike of procedural connectivity on the GPU: 8 unless the config says
# (genn.procedural_threads_per_spike), the value of GeNN's own PD14 example
# (userproject/potjans_microcircuit.py, GeNN 5.4.0). Not in the config schema's defaults, so that
# specs made before the option existed stay unchanged (finished points are not rerun).
DEFAULT_OPTIONS = {"procedural_connectivity": False, "procedural_threads_per_spike": 8}
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


def delay_params(mean_ms: float, sd_ms: float, dt_ms: float = pd14.DT_MS) -> dict[str, float]:
    """The delay snippet's parameters, in time steps."""
    return {
        "meanSteps": mean_ms / dt_ms,
        "sdSteps": sd_ms / dt_ms,
        "minSteps": 0.5,
        "maxSteps": (mean_ms + DELAY_BOUND_SD * sd_ms) / dt_ms,
    }


def dendritic_delay_slots(net: pd14.Network, dt_ms: float = pd14.DT_MS) -> int:
    """Slots of GeNN's dendritic delay buffer for the longest delay the snippet can draw (one
    value for every projection, so that GeNN can fuse their postsynaptic models)."""
    longest = max(
        delay_params(m, s, dt_ms)["maxSteps"] for m, s in zip(net.delay_mean_ms.flat, net.delay_sd_ms.flat, strict=True)
    )
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


class GennBackend(Backend):
    """PD14 on one PyGeNN backend (chosen by the simulator name)."""

    name = "genn"
    library_package = "pygenn"

    def __init__(self, spec: dict):
        super().__init__(spec)
        self.backend_name = GENN_BACKENDS[spec["simulator"]]
        self.options = {**DEFAULT_OPTIONS, **spec.get("simulator_options", {})}
        self.procedural = bool(self.options["procedural_connectivity"])
        # Only the CUDA backend splits a spike over threads (genn-cpu refuses procedural connectivity).
        self.threads_per_spike = (
            int(self.options["procedural_threads_per_spike"])
            if self.procedural and self.backend_name == "cuda"
            else None
        )
        self._wall: dict[str, float] = {}
        self.info: dict = {}

    # Phases ----------------------------------------------------------------------------------

    def setup(self) -> None:
        import pygenn  # imported here so that the import is timed as part of setup

        self.pygenn = pygenn
        if self.backend_name not in pygenn.genn_model.backend_modules:
            built = ", ".join(pygenn.genn_model.backend_modules) or "none"
            raise RuntimeError(
                f"PyGeNN in {sys.prefix} has no {self.backend_name} backend (it has: {built}); the CUDA backend is "
                "built only where CUDA_PATH names a CUDA toolkit when the environment is made (docs/genn.md)"
            )
        self.net = pd14.derive(self.model["neuron_scale"], self.model["indegree_scale"], self.model["input"])
        name = f"pd14_{self.spec['simulator'].replace('-', '_')}"
        model = pygenn.GeNNModel("float", name, backend=self.backend_name, **self._preferences())
        model.dt = pd14.DT_MS
        model.seed = self.spec["seed"]
        model.timing_enabled = True
        model.fuse_postsynaptic_models = True
        model.default_narrow_sparse_ind_enabled = True
        model.default_var_location = pygenn.VarLocation.DEVICE  # weights and delays are never read back
        self.genn = model

    def _preferences(self) -> dict:
        """The backend's preferences: CUDA_PREFERENCES on the CUDA backend (recorded), none on the CPU."""
        if self.backend_name != "cuda":
            return {}
        from pygenn import cuda_backend

        self.info["cuda_preferences"] = CUDA_PREFERENCES
        enums = {
            "device_select_method": cuda_backend.DeviceSelect,
            "block_size_select_method": cuda_backend.BlockSizeSelect,
        }
        return {
            key: enums[key].__members__[value] if key in enums else value for key, value in CUDA_PREFERENCES.items()
        }

    def create(self) -> None:
        from pygenn import init_var

        net, P = self.net, pd14.NEURON
        self.populations = []
        for p, name in enumerate(pd14.POPULATIONS):
            params = {
                "C": P["C_m_pF"],  # pF, pA, mV and ms: R = tau_m / C in GOhm, so I * R is in mV
                "TauM": P["tau_m_ms"],
                "Vrest": P["E_L_mV"],
                "Vreset": P["V_reset_mV"],
                "Vthresh": P["V_th_mV"],
                "Ioffset": float(net.dc_amp_pA[p]),
                "TauRefrac": P["t_ref_ms"],
            }
            v0 = init_var("Normal", {"mean": float(pd14.V0_MEAN_MV[p]), "sd": float(pd14.V0_SD_MV[p])})
            pop = self.genn.add_neuron_population(
                name, int(net.num_neurons[p]), "LIF", params, {"V": v0, "RefracTime": 0.0}
            )
            pop.spike_recording_enabled = bool(self.model["record_spikes"])
            if net.input == "poisson" and net.ext_indegree[p] > 0:
                drive = {"weight": net.weight_ext_pA, "tauSyn": P["tau_syn_ms"], "rate": float(net.poisson_rate_hz[p])}
                self.genn.add_current_source(f"{name}_poisson", "PoissonExp", pop, drive, {"current": 0.0})
            self.populations.append(pop)

    def connect(self) -> None:
        from pygenn import (
            create_var_init_snippet,
            init_postsynaptic,
            init_sparse_connectivity,
            init_var,
            init_weight_update,
        )

        net = self.net
        # Kept on the backend: GeNN refers to the snippet until the model is built (a collected one crashes it).
        self.delay_snippet = delay_snippet = create_var_init_snippet(
            "pd14_delay_steps", params=list(delay_params(1.0, 1.0)), var_init_code=DELAY_SNIPPET_CODE
        )
        slots = dendritic_delay_slots(net)
        largest = float(np.finfo(np.float32).max)
        self.synapse_groups, self.expected_synapses = [], 0
        for t in range(len(pd14.POPULATIONS)):
            for s in range(len(pd14.POPULATIONS)):
                n = int(net.num_synapses[t, s])
                if n == 0:
                    continue
                mean_w, sd_w = float(net.weight_mean_pA[t, s]), float(net.weight_sd_pA[t, s])
                low, high = (0.0, largest) if mean_w > 0 else (-largest, 0.0)
                weight = init_var("NormalClipped", {"mean": mean_w, "sd": sd_w, "min": low, "max": high})
                delay = init_var(
                    delay_snippet, delay_params(float(net.delay_mean_ms[t, s]), float(net.delay_sd_ms[t, s]))
                )
                group = self.genn.add_synapse_population(
                    f"{pd14.POPULATIONS[s]}_to_{pd14.POPULATIONS[t]}",
                    "PROCEDURAL" if self.procedural else "SPARSE",
                    self.populations[s],
                    self.populations[t],
                    init_weight_update("StaticPulseDendriticDelay", {}, {"g": weight, "d": delay}),
                    init_postsynaptic("ExpCurr", {"tau": pd14.NEURON["tau_syn_ms"]}),
                    init_sparse_connectivity("FixedNumberTotalWithReplacement", {"num": n}),
                )
                group.max_dendritic_delay_timesteps = slots
                if self.threads_per_spike is not None:
                    group.num_threads_per_spike = self.threads_per_spike
                self.synapse_groups.append(group)
                self.expected_synapses += n
        self.info["dendritic_delay_slots"] = slots

    def prepare(self) -> None:
        self.build_dir = self._claim_build_dir()
        library = self.build_dir / f"{self.genn.name}_CODE" / "librunner.so"
        before = library.stat().st_mtime_ns if library.exists() else None
        start = time.perf_counter()
        self.genn.build(str(self.build_dir))
        self._wall["build"] = time.perf_counter() - start
        # GeNN recompiles only when the model changed (its hash of the model, model.sha).
        self.info["build"]["binary_reused"] = before is not None and library.stat().st_mtime_ns == before
        self.presim_steps = round(self.model["t_presim_ms"] / pd14.DT_MS)
        self.sim_steps = round(self.model["t_sim_ms"] / pd14.DT_MS)
        start = time.perf_counter()
        self.genn.load(num_recording_timesteps=self.sim_steps if self.model["record_spikes"] else None)
        self._wall["load"] = time.perf_counter() - start

    def presimulate(self) -> None:
        self._steps(self.presim_steps)

    def simulate(self) -> None:
        with GpuMemoryPoller() if self.backend_name == "cuda" else nullcontext() as poller:
            self._steps(self.sim_steps)
        if poller is not None:
            self.info["gpu_memory_peak_mb"] = poller.peak_mb
        if self.model["record_spikes"]:
            start = time.perf_counter()
            self.genn.pull_recording_buffers_from_device()
            self._wall["pull_recording"] = time.perf_counter() - start

    def _steps(self, steps: int) -> None:
        step = self.genn.step_time
        for _ in range(steps):
            step()

    def _claim_build_dir(self) -> Path:
        """The point's build directory in the build cache, locked while this process lives: GeNN
        regenerates and recompiles only what changed (a rerun of the same point reuses it)."""
        directory = build_root() / f"{self.spec['simulator']}-{build_key(self.spec, sys.prefix)}"
        directory.mkdir(parents=True, exist_ok=True)
        self._lock = open(directory / ".lock", "w")  # noqa: SIM115 (held until the process exits)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        self.info["build"] = {"directory": str(directory)}
        return directory

    # Results ---------------------------------------------------------------------------------

    def timers(self) -> dict[str, float]:
        timers = {f"genn_{name}": value for name, value in self._wall.items()}
        if getattr(self.genn, "_loaded", False):
            timers.update({name.removesuffix("_time"): float(getattr(self.genn, name)) for name in GENN_TIMERS})
        return timers

    def output(self) -> RankOutput:
        first_ids = np.concatenate([[0], np.cumsum(self.net.num_neurons)[:-1]]).astype(int)
        senders, times = [], []
        if self.model["record_spikes"]:
            for p, pop in enumerate(self.populations):
                recorded_ms, ids = pop.spike_recording_data[0]
                steps = spike_steps(np.rint(np.asarray(recorded_ms) / pd14.DT_MS), self.presim_steps, self.sim_steps)
                senders.append(np.asarray(ids, dtype=np.int64) + first_ids[p])
                times.append((steps + 1) * pd14.DT_MS)  # NEST's stamp: the end of the step
        return RankOutput(
            rank=0,
            num_ranks=1,
            threads=1,
            local_synapses=self._synapses_held(),
            population_first_ids=first_ids.tolist(),
            spike_senders=np.concatenate(senders) if senders else np.zeros(0, dtype=np.int64),
            spike_times_ms=np.concatenate(times) if times else np.zeros(0),
            simulator_version=package_versions(("pygenn",)).get("pygenn", "unknown"),
            simulator_info=self._simulator_info(),
        )

    def _synapses_held(self) -> int:
        """Synapses GeNN holds, counted from its row lengths (sparse), else the totals handed to it
        (procedural connectivity keeps none)."""
        if self.procedural:
            self.info["num_synapses_source"] = "fixed totals handed to GeNN (procedural connectivity stores none)"
            return self.expected_synapses
        held = 0
        for group in self.synapse_groups:
            group.pull_connectivity_from_device()
            held += int(np.sum(group._row_lengths.view, dtype=np.int64))  # PyGeNN 5.4: the row lengths array
        self.info["num_synapses_source"] = "row lengths read back from GeNN"
        return held

    def _simulator_info(self) -> dict:
        return {
            "backend": self.backend_name,
            "gpu": self.backend_name == "cuda",
            "threads": 1,
            "connectivity": "procedural" if self.procedural else "sparse",
            "procedural_threads_per_spike": self.threads_per_spike,
            "synapse_objects": len(self.synapse_groups),
            "delays": "per synapse (dendritic delay)",
            "phase_sources": {
                "prepare": "wall clock: GeNN's build (code generation, compilation) and load (allocation, "
                "initialisation on the device: GeNN timers init and init_sparse)",
                "presimulate": "wall clock: stepping (GeNN timers neuron_update and presynaptic_update inside)",
                "simulate": "wall clock: stepping, plus copying the spike recording buffer (genn_pull_recording)",
            },
            "environment": {
                "python": sys.version.split()[0],
                "executable": sys.executable,
                "packages": package_versions(("pygenn", "numpy")),
            },
            **self.info,
        }
