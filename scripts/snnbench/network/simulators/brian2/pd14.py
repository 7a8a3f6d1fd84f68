"""PD14 on Brian2: one implementation, four devices (simulator variants).

- `brian2-runtime`: Brian2's runtime device (Python + generated Cython); small scales only.
- `brian2-cpp`: cpp_standalone, OpenMP threads. The build is cached outside the repository and
  reused across seeds (everything seed-dependent is data the binary reads at start-up).
- `brian2-genn` / `brian2-genn-cpu`: Brian2GeNN on the GPU / in GeNN's CPU-only mode. GeNN has one
  delay per Synapses object, so each projection is split by delay bin (`delay_bins`).
- `brian2-cuda`: Brian2CUDA's cuda_standalone device.

This module is the backend class, whose methods are the phases; the parts it uses live in
`snnbench.network.simulators.brian2` by role (network drawing, delay binning, devices, build cache,
the standalone binary's runs and timer marks).

The network is PD14 from `snnbench.network.models.pd14`, built the way the NEST backend builds it: exponential-
current LIF neurons (the equations below are iaf_psc_exp's), one NeuronGroup per population,
a fixed total number of synapses per projection with sources and targets drawn with replacement,
normal weights and delays redrawn (not clipped) until they have the right sign or reach dt,
optimized initial potentials, and Poisson drive (PoissonInput: K_ext sources at 8 Hz per neuron)
or the equivalent DC. Everything random about the network is drawn with numpy from the point's
seed (`brian2.network`), so every device builds the same network for the same seed; only the
Poisson drive comes from the device's own generator.

Phases (the driver times each call; see `phase_split`):
setup = import and device selection; create = groups, inputs, monitors; connect = drawing the
connectivity and creating the Synapses objects; prepare = code generation and compilation
(standalone devices) or generating and compiling the code objects with a zero-length run
(runtime); presimulate / simulate = the two runs. On standalone devices both runs happen inside
the compiled binary, started in `presimulate`; std::chrono timers written into the binary mark
initialisation, presimulation and simulation, and `phase_split` moves the binary's own
initialisation and teardown into `prepare` so that presimulate and simulate are device-side
times. The simulator timers (`timers()`) hold every part separately: codegen, compile, binary
init, presim, sim, teardown and the wall time of the whole binary run.
"""

from __future__ import annotations

import os
import sys
import time
from contextlib import nullcontext

import numpy as np

from snnbench.machine.gpu import GpuMemoryPoller
from snnbench.network.models import pd14, pd14_exported
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.network.simulators.brian2 import standalone_runs
from snnbench.network.simulators.brian2.build_cache import claim_build_dir, newest_mtimes
from snnbench.network.simulators.brian2.delays import (
    DEFAULT_DELAY_BINS,
    binned_delay_steps,
    binning_summary,
    delay_bins,
)
from snnbench.network.simulators.brian2.devices import (
    DEVICES,
    check_prerequisites,
    genn_info,
    use_standalone_device,
)
from snnbench.network.simulators.brian2.network import draw_projections, initial_potentials, projection_label
from snnbench.records.provenance import package_versions

# iaf_psc_exp: exponential-current LIF neurons, integrated exactly.
LIF_EQUATIONS = """
        dv/dt = (E_L - v) / tau_m + (I_syn + I_dc) / C_m : volt (unless refractory)
        dI_syn/dt = -I_syn / tau_syn : amp
        """


# The membrane's constants every model's Brian2 equations name (E_L, tau_m, ...).
MEMBRANE = ("E_L", "tau_m", "C_m", "tau_syn", "V_th", "V_reset")


def refractory_like_nest(b2, t_ref_ms: float, dt_ms: float):
    """Brian2's `refractory` for NEST's refractory period. NEST clamps the membrane in the t_ref / dt
    steps after the spike's step (iaf_psc_exp counts them down); Brian2 is refractory while
    t - lastspike < refractory, which clamps one step fewer (the last step of the period already
    integrates). One step more gives NEST's count: measured on one network with DC input, the
    shorter period alone made Brian2's spikes drift from NEST's within 100 ms (docs/same-network.md)."""
    return (t_ref_ms + dt_ms) * b2.ms


def membrane_constants(b2, neuron: dict) -> dict:
    """A model's neuron parameters (NEURON in its module, the unit in the name: "tau_m_ms") that the
    equations name, as Brian2 quantities."""
    constants = {}
    for key, value in neuron.items():
        name, unit = key.rsplit("_", 1)
        if name in MEMBRANE:
            constants[name] = value * getattr(b2, unit)
    missing = set(MEMBRANE) - set(constants)
    if missing:
        raise KeyError(f"neuron parameters missing for Brian2: {sorted(missing)}")
    return constants


class Brian2Backend(Backend):
    """PD14 on one Brian2 device (chosen by the simulator name)."""

    name = "brian2"
    dt_ms = pd14.DT_MS  # the model's resolution

    def __init__(self, spec: dict):
        super().__init__(spec)
        self.device = DEVICES[spec["simulator"]]
        self.options = {"delay_bins": DEFAULT_DELAY_BINS, **spec.get("simulator_options", {})}
        # Brian2GeNN must bin delays; the other devices can, to measure what binning changes.
        self.binned = self.device.binned_delays or bool(self.options.get("bin_delays"))
        self._timers: dict[str, float] = {}
        self.info: dict = {}

    # Phases ----------------------------------------------------------------------------------

    def setup(self) -> None:
        check_prerequisites(self.spec["simulator"])
        import brian2  # imported here so that the import is timed as part of setup

        self.b2 = brian2
        self.net = self.derive_network()
        brian2.prefs.logging.console_log_level = "WARNING"
        brian2.prefs.logging.file_log = False
        brian2.prefs.logging.delete_log_on_exit = True
        self.threads = self.spec["resources"]["threads_per_rank"]
        self.cores = max(1, min(self.spec["resources"]["virtual_processes"], os.cpu_count() or 1))
        if self.device.standalone:
            self.build_dir, self.lock = claim_build_dir(self.spec, self.device)
            use_standalone_device(brian2, self.device, self.build_dir, self.threads, self.cores, self.options)
        else:
            brian2.set_device("runtime")
            brian2.seed(self.spec["seed"])
        brian2.defaultclock.dt = self.dt_ms * brian2.ms

    def derive_network(self):
        """The model's network at the point's size (a builder of another model overrides it)."""
        return pd14.network(self.model)

    def initial_potentials(self) -> list[np.ndarray]:
        """Each population's initial potentials (mV): NEST's export (network_seed), else drawn from the seed."""
        exported = pd14_exported.read(self.model)
        return exported.initial_potentials() if exported else initial_potentials(self.net, self.spec["seed"])

    def projections(self) -> list[pd14_exported.Projection]:
        """The synapses: NEST's export (network_seed), else drawn from the point's seed."""
        exported = pd14_exported.read(self.model)
        return (
            exported.projections(pd14.DT_MS) if exported else draw_projections(self.net, self.spec["seed"], pd14.DT_MS)
        )

    def create(self) -> None:
        b2, net = self.b2, self.net
        P = pd14.NEURON
        constants = membrane_constants(b2, P)
        v0 = self.initial_potentials()
        self.groups, self.inputs, self.monitors = [], [], []
        for p, name in enumerate(pd14.POPULATIONS):
            group = b2.NeuronGroup(
                int(net.num_neurons[p]),
                LIF_EQUATIONS,
                threshold="v > V_th",
                reset="v = V_reset",
                refractory=refractory_like_nest(b2, P["t_ref_ms"], self.dt_ms),
                method="exact",
                namespace={**constants, "I_dc": net.dc_amp_pA[p] * b2.pA},
                name=f"pop_{name}",
            )
            group.v = v0[p] * b2.mV
            self.groups.append(group)
            if net.input == "poisson" and net.ext_indegree[p] > 0:
                self.inputs.append(
                    b2.PoissonInput(
                        group,
                        "I_syn",
                        N=int(net.ext_indegree[p]),
                        rate=pd14.BG_RATE_HZ * b2.Hz,
                        weight=net.weight_ext_pA * b2.pA,
                    )
                )
            if self.model["record_spikes"]:
                self.monitors.append(b2.SpikeMonitor(group, name=f"spikes_{name}"))

    def connect(self) -> None:
        b2 = self.b2
        self.synapses = []
        self.binning = []
        self.num_synapses = 0
        dt_ms = pd14.DT_MS
        for proj in self.projections():
            src, tgt = self.groups[proj.source], self.groups[proj.target]
            label = projection_label(proj)
            delays = proj.delay_steps
            parts = [(slice(None), None)]  # one Synapses object, a delay per synapse
            if self.binned:
                bins = delay_bins(proj.delay_steps, self.options["delay_bins"])
                self.binning.append(binning_summary(label, proj.delay_steps, bins))
                if self.device.binned_delays:  # one Synapses object per bin, with the bin's delay
                    parts = [(b.index, b.delay_steps) for b in bins]
                else:  # the same delays as data: what binning does to the activity, on any device
                    delays = binned_delay_steps(proj.delay_steps, bins)
            for k, (index, steps) in enumerate(parts):
                kwargs = {"delay": steps * dt_ms * b2.ms} if steps is not None else {}
                syn = b2.Synapses(
                    src,
                    tgt,
                    "w : amp (constant)",
                    on_pre="I_syn_post += w",
                    name=f"syn_{label}" + (f"_d{k}" if steps is not None else ""),
                    **kwargs,
                )
                syn.connect(i=proj.i[index], j=proj.j[index])
                syn.w = proj.weight_pA[index] * b2.pA
                if steps is None:
                    syn.delay = delays * dt_ms * b2.ms
                self.synapses.append(syn)
                self.num_synapses += int(proj.i[index].size)
        self.network = b2.Network(self.groups, self.inputs, self.monitors, self.synapses)

    def prepare(self) -> None:
        if not self.device.standalone:
            # Generate and compile every code object without advancing time.
            start = time.perf_counter()
            self.network.run(0 * self.b2.ms)
            self._timers["codegen_and_compile"] = time.perf_counter() - start
            return
        before = newest_mtimes(self.build_dir)
        build_timers, self._run_binary = standalone_runs.build(
            self.b2,
            self.network,
            self.device.brian_device,
            self.build_dir,
            self.model["t_presim_ms"],
            self.model["t_sim_ms"],
        )
        self._timers.update(build_timers)
        after = newest_mtimes(self.build_dir)
        rebuilt = sorted(k for k, v in after.items() if before.get(k) != v)
        self.info["build"] = {
            "directory": str(self.build_dir),
            "binary_reused": bool(before) and not rebuilt,
            "rebuilt_files": len(rebuilt),
            "make_jobs": self.cores,
        }

    def presimulate(self) -> None:
        if not self.device.standalone:
            self.network.run(self.model["t_presim_ms"] * self.b2.ms)
            return
        results = standalone_runs.reset_results(self.build_dir, self.spec["seed"])
        start = time.perf_counter()
        with GpuMemoryPoller() if self.device.gpu else nullcontext() as poller:
            self._run_binary()
        wall = time.perf_counter() - start
        if self.device.gpu:
            self.info["gpu_memory_peak_mb"] = poller.peak_mb
        marks = standalone_runs.read_marks(results / standalone_runs.MARKS_FILE)
        self._timers.update(standalone_runs.binary_timers(marks, wall))

    def simulate(self) -> None:
        if not self.device.standalone:
            self.network.run(self.model["t_sim_ms"] * self.b2.ms)
            return
        # Everything ran in the binary (see presimulate); reading the results is what is left.
        self._read_spikes()

    def _read_spikes(self) -> None:
        self._spikes = [(np.asarray(m.i[:]), np.asarray(m.t[:] / self.b2.ms)) for m in self.monitors]

    # Results ---------------------------------------------------------------------------------

    def timers(self) -> dict[str, float]:
        return dict(self._timers)

    def phase_split(self, phases_s: dict[str, float]) -> dict[str, float]:
        """On standalone devices the binary runs in the presimulate call: keep its device-side
        presimulation and simulation times there, and move the rest of the binary's run (start,
        initialisation, teardown, result files) into prepare. The sum stays the wall time."""
        if not self.device.standalone or "binary_wall" not in self._timers:
            return phases_s
        t = self._timers
        phases = dict(phases_s)
        binary_other = phases["presimulate"] - t["binary_presimulate"] - t["binary_simulate"]
        phases["prepare"] += binary_other
        phases["presimulate"] = t["binary_presimulate"]
        phases["simulate"] += t["binary_simulate"]  # plus reading the results
        return phases

    def output(self) -> RankOutput:
        if not self.device.standalone:
            self._read_spikes()
        first_ids = np.concatenate([[0], np.cumsum(self.net.num_neurons)[:-1]]).astype(int)
        t_presim = self.model["t_presim_ms"]
        senders, times = [], []
        for p, (i, t) in enumerate(getattr(self, "_spikes", [])):
            keep = t >= t_presim - 1e-9  # the measured window only (Brian2GeNN records from t = 0)
            senders.append(i[keep].astype(np.int64) + first_ids[p])
            times.append(t[keep] + self.dt_ms)  # NEST's stamp: the end of the step
        created = self._synapses_created()
        info = self._simulator_info()
        return RankOutput(
            rank=0,
            num_ranks=1,
            threads=info["threads"],
            local_synapses=created,
            population_first_ids=first_ids.tolist(),
            spike_senders=np.concatenate(senders) if senders else np.zeros(0, dtype=np.int64),
            spike_times_ms=np.concatenate(times) if times else np.zeros(0),
            simulator_version=self.b2.__version__,
            simulator_info=info,
            model_results=pd14_exported.identity_read(self.model),  # the digest of the network it read
        )

    def _simulator_info(self) -> dict:
        """The record's `simulator` section: device, how the network was split, where each phase's
        time comes from, the child's environment, the build and what binning did."""
        info = {
            "device": self.device.brian_device,
            "gpu": self.device.gpu,
            "threads": self.threads if self.device.brian_device == "cpp_standalone" else 1,
            "synapse_objects": len(self.synapses),
            "delays": "binned" if self.binned else "per synapse",
            "phase_sources": self._phase_sources(),
            # The child's own environment (the record's provenance describes the parent's).
            "environment": {
                "python": sys.version.split()[0],
                "executable": sys.executable,
                "packages": package_versions(("brian2", "brian2genn", "brian2cuda", "numpy", "cython")),
            },
            **self.info,
        }
        if self.device.brian_device == "genn":
            info["genn"] = genn_info()
        if self.binned:
            info["delay_bins"] = self.options["delay_bins"]
            info["delay_binning"] = self.binning
        return info

    def _synapses_created(self) -> int:
        """Synapses the simulator holds (read back from it), else the number handed to it."""
        try:
            return int(sum(int(np.asarray(s.N[:]).ravel()[0]) for s in self.synapses))
        except Exception:  # noqa: BLE001 (not every device can read N back; say what was created)
            self.info["num_synapses_source"] = "created (not read back from the device)"
            return self.num_synapses

    def _phase_sources(self) -> dict[str, str]:
        if not self.device.standalone:
            return {
                "prepare": "wall clock: Network.run(0 ms) (code generation and Cython compilation)",
                "presimulate": "wall clock: Network.run(t_presim)",
                "simulate": "wall clock: Network.run(t_sim)",
            }
        return {
            "prepare": "wall clock: code generation and compilation, plus the binary's start, initialisation "
            "and teardown (binary run minus its device-side presimulate and simulate)",
            "presimulate": "device-side std::chrono timer in the binary",
            "simulate": "device-side std::chrono timer in the binary, plus reading the spike files (wall clock)",
        }
