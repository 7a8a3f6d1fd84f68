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
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np

from snnbench.machine.gpu import GpuMemoryPoller
from snnbench.network.models import pd14, pd14_exported
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.network.simulators.genn import exact
from snnbench.network.simulators.genn.common import (
    CUDA_PREFERENCES,
    DEFAULT_OPTIONS,
    DELAY_SNIPPET_CODE,
    GENN_BACKENDS,
    GENN_TIMERS,
    build_key,
    build_root,
    delay_params,
    delay_slots,
    spike_steps,
)
from snnbench.records.provenance import package_versions


class GennBackend(Backend):
    """PD14 on one PyGeNN backend (chosen by the simulator name)."""

    name = "genn"
    library_package = "pygenn"
    exported = None  # a network NEST exported (pd14.network_seed); a model's builder that reads none keeps None

    def __init__(self, spec: dict):
        super().__init__(spec)
        self.backend_name = GENN_BACKENDS[spec["simulator"]]
        self.options = {**DEFAULT_OPTIONS, **spec.get("simulator_options", {})}
        self.procedural = bool(self.options["procedural_connectivity"])
        self.exact = self.options["neuron_model"] == "iaf_psc_exp"  # NEST's integration (simulators.genn.exact)
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
        self.derive()
        name = f"{self.spec.get('model_name', 'pd14')}_{self.spec['simulator'].replace('-', '_')}"
        model = pygenn.GeNNModel(self.options["precision"], name, backend=self.backend_name, **self._preferences())
        model.dt = self.dt_ms
        model.seed = self.spec["seed"]
        model.timing_enabled = True
        model.fuse_postsynaptic_models = True
        model.default_narrow_sparse_ind_enabled = True
        # Weights and delays are never read back; an exported network's are copied in from the host.
        model.default_var_location = (
            pygenn.VarLocation.HOST_DEVICE if self.exported is not None else pygenn.VarLocation.DEVICE
        )
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

    # The model's network, the same way for every model: hooks that a model's builder on GeNN overrides.
    dt_ms = pd14.DT_MS

    def derive(self) -> None:
        self.net = pd14.network(self.model)
        self.sizes = [int(n) for n in self.net.num_neurons]
        # A network NEST exported once (network_seed): GeNN is handed its synapses instead of drawing them.
        self.exported = pd14_exported.read(self.model)
        if self.exported is not None and self.procedural:
            raise ValueError(
                "an exported network (pd14.network_seed) is stored, not procedural: drop genn.procedural_connectivity"
            )

    def neuron_populations(self) -> list[dict]:
        """name, size, GeNN's LIF parameters, the initial V (mean, sd) and the Poisson drives (weight
        pA, tauSyn ms, rate spikes/s) of each population."""
        net, P = self.net, pd14.NEURON
        found = []
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
            drives = []
            if net.input == "poisson" and net.ext_indegree[p] > 0:
                drives.append((net.weight_ext_pA, P["tau_syn_ms"], float(net.poisson_rate_hz[p])))
            v0 = (float(pd14.V0_MEAN_MV[p]), float(pd14.V0_SD_MV[p]))
            found.append({"name": name, "size": self.sizes[p], "params": params, "v0": v0, "drives": drives})
        return found

    def projections(self) -> list[dict]:
        """name, source and target (population indices), number of synapses, the weight's normal (mean,
        sd) and bounds, the delay's normal (ms) and smallest step count, and tauSyn of each projection."""
        net, largest = self.net, float(np.finfo(np.float32).max)
        found = []
        for t in range(len(pd14.POPULATIONS)):
            for s in range(len(pd14.POPULATIONS)):
                if net.num_synapses[t, s] == 0:
                    continue
                mean_w = float(net.weight_mean_pA[t, s])
                found.append(
                    {
                        "name": f"{pd14.POPULATIONS[s]}_to_{pd14.POPULATIONS[t]}",
                        "source": s,
                        "target": t,
                        "n": int(net.num_synapses[t, s]),
                        "weight": (mean_w, float(net.weight_sd_pA[t, s])),
                        "bounds": (0.0, largest) if mean_w > 0 else (-largest, 0.0),
                        "delay": (float(net.delay_mean_ms[t, s]), float(net.delay_sd_ms[t, s])),
                        "min_steps": 0.5,  # NEST's bound: dt / 2
                        "tau_syn_ms": pd14.NEURON["tau_syn_ms"],
                    }
                )
        return found

    def create(self) -> None:
        from pygenn import init_var

        self.populations = []
        exported_v0 = self.exported.initial_potentials() if self.exported is not None else None
        exact_model = exact.neuron_model() if self.exact else None
        for p, population in enumerate(self.neuron_populations()):
            mean, sd = population["v0"]
            v0 = init_var("Normal", {"mean": mean, "sd": sd}) if exported_v0 is None else exported_v0[p]
            if exact_model is None:
                model, params, state = "LIF", population["params"], {"V": v0, "RefracTime": 0.0}
            else:  # NEST's exact integration (genn.neuron_model: iaf_psc_exp)
                params = exact.params(population["params"], pd14.NEURON["tau_syn_ms"], self.dt_ms)
                model, state = exact_model, {"V": v0, "I": 0.0, "RefracSteps": 0}
            pop = self.genn.add_neuron_population(population["name"], population["size"], model, params, state)
            pop.spike_recording_enabled = bool(self.model["record_spikes"])
            for k, (weight, tau_syn, rate) in enumerate(population["drives"]):
                drive = {"weight": weight, "tauSyn": tau_syn, "rate": rate}
                name = f"{population['name']}_poisson" + (f"_{k}" if k else "")
                self.genn.add_current_source(name, "PoissonExp", pop, drive, {"current": 0.0})
            self.populations.append(pop)

    def connect(self) -> None:
        if self.exported is not None:
            self.connect_exported()
            return
        from pygenn import (
            create_var_init_snippet,
            init_postsynaptic,
            init_sparse_connectivity,
            init_var,
            init_weight_update,
        )

        # Kept on the backend: GeNN refers to the snippet until the model is built (a collected one crashes it).
        self.delay_snippet = delay_snippet = create_var_init_snippet(
            "delay_steps", params=list(delay_params(1.0, 1.0)), var_init_code=DELAY_SNIPPET_CODE
        )
        projections = self.projections()
        slots = delay_slots(projections, self.dt_ms)
        self.synapse_groups, self.expected_synapses = [], 0
        for projection in projections:
            (mean_w, sd_w), (low, high) = projection["weight"], projection["bounds"]
            weight = init_var("NormalClipped", {"mean": mean_w, "sd": sd_w, "min": low, "max": high})
            steps = delay_params(*projection["delay"], self.dt_ms, projection["min_steps"])
            group = self.genn.add_synapse_population(
                projection["name"],
                "PROCEDURAL" if self.procedural else "SPARSE",
                self.populations[projection["source"]],
                self.populations[projection["target"]],
                init_weight_update("StaticPulseDendriticDelay", {}, {"g": weight, "d": init_var(delay_snippet, steps)}),
                init_postsynaptic("ExpCurr", {"tau": projection["tau_syn_ms"]}),
                init_sparse_connectivity("FixedNumberTotalWithReplacement", {"num": projection["n"]}),
            )
            group.max_dendritic_delay_timesteps = slots
            if self.threads_per_spike is not None:
                group.num_threads_per_spike = self.threads_per_spike
            self.synapse_groups.append(group)
            self.expected_synapses += projection["n"]
        self.info["dendritic_delay_slots"] = slots

    def connect_exported(self) -> None:
        """NEST's exported synapses, one sparse synapse population per projection, their weights and
        delays (whole steps, GeNN's dendritic delay) as values."""
        from pygenn import init_postsynaptic, init_weight_update

        projections = self.exported.projections(self.dt_ms)
        offset = exact.DELAY_OFFSET_STEPS if self.exact else 0
        slots = int(max(int(p.delay_steps.max()) for p in projections)) + 1 - offset
        postsynaptic = ("DeltaCurr", {}) if self.exact else ("ExpCurr", {"tau": pd14.NEURON["tau_syn_ms"]})
        self.synapse_groups, self.expected_synapses = [], 0
        for projection in projections:
            values = {"g": projection.weight_pA, "d": (projection.delay_steps - offset).astype(np.float64)}
            group = self.genn.add_synapse_population(
                f"{pd14.POPULATIONS[projection.source]}_to_{pd14.POPULATIONS[projection.target]}",
                "SPARSE",
                self.populations[projection.source],
                self.populations[projection.target],
                init_weight_update("StaticPulseDendriticDelay", {}, values),
                init_postsynaptic(*postsynaptic),
            )
            group.set_sparse_connections(projection.i, projection.j)
            group.max_dendritic_delay_timesteps = slots
            self.synapse_groups.append(group)
            self.expected_synapses += int(projection.i.size)
        self.info["dendritic_delay_slots"] = slots
        self.info["network"] = "exported by NEST (pd14.network_seed)"

    def prepare(self) -> None:
        self.build_dir = self._claim_build_dir()
        library = self.build_dir / f"{self.genn.name}_CODE" / "librunner.so"
        before = library.stat().st_mtime_ns if library.exists() else None
        start = time.perf_counter()
        self.genn.build(str(self.build_dir))
        self._wall["build"] = time.perf_counter() - start
        # GeNN recompiles only when the model changed (its hash of the model, model.sha).
        self.info["build"]["binary_reused"] = before is not None and library.stat().st_mtime_ns == before
        self.presim_steps = round(self.model["t_presim_ms"] / self.dt_ms)
        self.sim_steps = round(self.model["t_sim_ms"] / self.dt_ms)
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
        first_ids = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(int)
        senders, times = [], []
        if self.model["record_spikes"]:
            for p, pop in enumerate(self.populations):
                recorded_ms, ids = pop.spike_recording_data[0]
                steps = spike_steps(np.rint(np.asarray(recorded_ms) / self.dt_ms), self.presim_steps, self.sim_steps)
                senders.append(np.asarray(ids, dtype=np.int64) + first_ids[p])
                times.append((steps + 1) * self.dt_ms)  # NEST's stamp: the end of the step
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
            model_results=pd14_exported.identity_read(self.model),  # the digest of the network it read
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
            "precision": self.options["precision"],
            "neuron_model": self.options["neuron_model"],
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
