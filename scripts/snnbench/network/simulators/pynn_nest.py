"""PD14 in PyNN 0.13 on NEST (simulator `pynn-nest`), threads and MPI ranks.

The same network as `snnbench.network.simulators.nest.pd14` (both read `snnbench.network.models.pd14`),
written with PyNN's portable API only, so that the same code would run on any PyNN back end: standard cell type
IF_curr_exp, PyNN's FixedTotalNumberConnector, RandomDistribution for initial potentials,
weights and delays, SpikeSourcePoisson for Poisson drive. Where PyNN makes the network differ
from the native NEST one, the comments below say so:

- Random numbers: PyNN 0.13 cannot hand a redrawn ("clipped") normal to NEST's own RNGs (its
  NativeRNG has no normal_clipped), so connectivity, weights, delays and initial potentials
  are drawn in Python by PyNN's NumpyRNG, seeded with the point's seed. The distributions are
  NEST's (normal, redrawn until inside the bounds), the streams differ: the two networks are
  two samples of the same random network, not the same sample.
- Connectivity: PyNN's FixedTotalNumberConnector draws the N synapses of a projection (sources
  and targets uniformly, with replacement, autapses allowed), as NEST's `fixed_total_number`
  rule does, but in a Python loop, and connects target by target.
- Poisson drive: PyNN's SpikeSourcePoisson is a poisson_generator behind a parrot_neuron, so
  each neuron gets its own source (OneToOneConnector) for an independent train, where NEST's
  backend connects one generator per population to all its neurons. Same statistics, but
  2 extra nodes per neuron and every external spike goes through NEST's spike delivery.
- Time: PyNN simulates one min_delay past the first requested run (so that NEST delivers all
  recorded data); the presimulation is t_presim + min_delay of model time. Spikes are
  recorded from t = 0 and the measured window (t_presim, t_presim + t_sim] is cut out after
  the run (NEST's backend starts its recorder at t_presim).

PyNN's NEST extension module (`pynn_extensions`: stochastic synapses only) is not needed by
PD14, which uses static synapses. PyNN tries to build it with `nest-config` and cmake on first
import, which fails against the PyPI NEST wheel (build-time paths, old C++ string ABI) and
warns; `import_pynn_nest` stops the attempt and says so in the record (`simulator_info`).
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from snnbench.network.models import pd14, pd14_exported
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.network.simulators.nest_kernel import build_info, kernel_timers

# What the record says about PyNN's NEST extension when it is not loaded.
EXTENSIONS_NOT_BUILT = (
    "not built: PD14 uses no stochastic synapses (the only models in pynn_extensions); "
    "snnbench stops PyNN's cmake build on import"
)


def import_pynn_nest():
    """Import pyNN.nest without its attempt to compile the NEST extension, and without warnings.

    PyNN first tries `nest.Install("pynn_extensions")`, which loads the extension where an
    installation has it; only if that fails does it look for `nest-config` on PATH and run
    cmake. Hiding `nest-config` from PATH for the import skips the build deterministically
    (whatever compilers the machine has); PyNN then warns that it cannot find nest-config,
    which is filtered, as is the deprecation warning of nest.set_verbosity that PyNN's import
    triggers. Returns the module and whether the extension was loaded.
    """
    import nest  # noqa: F401  (imported first, with the full PATH)

    path = os.environ.get("PATH", "")
    os.environ["PATH"] = os.pathsep.join(
        d for d in path.split(os.pathsep) if not os.path.isfile(os.path.join(d, "nest-config"))
    )
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Cannot find nest-config", category=UserWarning)
            warnings.filterwarnings("ignore", message=r"\s*Provided for backward compatibility", category=UserWarning)
            import pyNN.nest as sim
    finally:
        os.environ["PATH"] = path
    return sim, bool(sim.simulator.state.extensions_loaded)


class PynnNestBackend(Backend):
    name = "pynn-nest"
    library_package = "nest"

    def setup(self) -> None:
        # Imported here so that the import is timed as part of setup, as for NEST's backend.
        self.sim, self.extensions_loaded = import_pynn_nest()
        import nest
        import pyNN
        from pyNN.random import NumpyRNG, RandomDistribution

        self.nest, self.RandomDistribution, self.pynn_version = nest, RandomDistribution, pyNN.__version__
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"\s*Provided for backward compatibility", category=UserWarning)
            self.sim.setup(
                timestep=pd14.DT_MS,
                threads=self.spec["resources"]["threads_per_rank"],
                rng_seed=self.spec["seed"],  # NEST's kernel RNGs: the Poisson generators
                # iaf_psc_exp on the time grid, as NEST's backend; PyNN's default ("off_grid")
                # would give the precise-spike-time model iaf_psc_exp_ps.
                spike_precision="on_grid",
                # NEST's warnings off: PyNN's connect calls nest.Connect once per target neuron, and
                # NEST warns at each call that earlier GetConnections results are now invalid.
                verbosity="error",
            )
        # Connectivity, weights, delays, initial potentials. parallel_safe (PyNN's default): every
        # rank draws the same stream and keeps its part, so the network does not depend on the
        # number of ranks.
        self.rng = NumpyRNG(seed=self.spec["seed"])
        self.net = pd14.network(self.model)
        # A network NEST exported once (network_seed), else the one drawn here from the point's seed.
        self.exported = pd14_exported.read(self.model)

    def create(self) -> None:
        sim, net, rd = self.sim, self.net, self.RandomDistribution
        # PyNN's units: nF and nA where NEST's iaf_psc_exp takes pF and pA.
        self.populations = []
        for i, name in enumerate(pd14.POPULATIONS):
            cell = sim.IF_curr_exp(
                cm=pd14.NEURON["C_m_pF"] * 1e-3,
                tau_m=pd14.NEURON["tau_m_ms"],
                tau_syn_E=pd14.NEURON["tau_syn_ms"],
                tau_syn_I=pd14.NEURON["tau_syn_ms"],
                tau_refrac=pd14.NEURON["t_ref_ms"],
                v_rest=pd14.NEURON["E_L_mV"],
                v_thresh=pd14.NEURON["V_th_mV"],
                v_reset=pd14.NEURON["V_reset_mV"],
                i_offset=float(net.dc_amp_pA[i]) * 1e-3,
            )
            population = sim.Population(int(net.num_neurons[i]), cell, label=name)
            if self.exported is None:
                population.initialize(v=rd("normal", mu=pd14.V0_MEAN_MV[i], sigma=pd14.V0_SD_MV[i], rng=self.rng))
            else:
                population.initialize(v=self.exported.initial_potentials()[i])
            if self.model["record_spikes"]:
                population.record("spikes")
            self.populations.append(population)
        self.sources = []
        if net.input == "poisson":
            for i, target in enumerate(self.populations):
                rate = float(net.poisson_rate_hz[i])
                self.sources.append(sim.Population(target.size, sim.SpikeSourcePoisson(rate=rate)))

    def connect(self) -> None:
        self.projections = {}
        if self.exported is None:
            self.draw_connections()
        else:
            self.connect_exported()
        for source, target in zip(self.sources, self.populations, strict=False):  # no sources with DC drive
            self.sim.Projection(
                source,
                target,
                self.sim.OneToOneConnector(),
                self.sim.StaticSynapse(weight=self.net.weight_ext_pA * 1e-3, delay=pd14.DELAY_EXT_MS),
                receptor_type="excitatory",
            )

    def connect_exported(self) -> None:
        """The exported synapses, a FromListConnector per projection (PyNN's units: nA, ms)."""
        sim = self.sim
        for projection in self.exported.projections(pd14.DT_MS):
            s, t = projection.source, projection.target
            connections = np.column_stack(
                [projection.i, projection.j, projection.weight_pA * 1e-3, projection.delay_steps * pd14.DT_MS]
            )
            self.projections[s, t] = sim.Projection(
                self.populations[s],
                self.populations[t],
                sim.FromListConnector(connections, column_names=["weight", "delay"]),
                sim.StaticSynapse(),
                receptor_type="excitatory" if pd14.EXCITATORY[s] else "inhibitory",
            )

    def draw_connections(self) -> None:
        sim, net, rd = self.sim, self.net, self.RandomDistribution
        for t, target in enumerate(self.populations):
            for s, source in enumerate(self.populations):
                if net.num_synapses[t, s] == 0:
                    continue
                mean_w, sd_w = net.weight_mean_pA[t, s] * 1e-3, net.weight_sd_pA[t, s] * 1e-3
                excitatory = mean_w > 0
                # Redrawn (not clipped) until they have the right sign / reach the time step,
                # as in NEST's backend (normal_clipped redraws out-of-bounds values).
                weight = rd(
                    "normal_clipped",
                    mu=mean_w,
                    sigma=sd_w,
                    low=0.0 if excitatory else -np.inf,
                    high=np.inf if excitatory else 0.0,
                    rng=self.rng,
                )
                delay = rd(
                    "normal_clipped",
                    mu=net.delay_mean_ms[t, s],
                    sigma=net.delay_sd_ms[t, s],
                    low=pd14.DT_MS - 0.5 * pd14.DT_MS,
                    high=np.inf,
                    rng=self.rng,
                )
                self.projections[s, t] = sim.Projection(
                    source,
                    target,
                    sim.FixedTotalNumberConnector(int(net.num_synapses[t, s]), rng=self.rng),
                    sim.StaticSynapse(weight=weight, delay=delay),
                    receptor_type="excitatory" if excitatory else "inhibitory",
                )

    def prepare(self) -> None:
        # PyNN has no separate preparation step: it connects recorders and parrots and calls
        # nest.Simulate (which prepares) inside its first run, timed as presimulate.
        pass

    def presimulate(self) -> None:
        if self.model["t_presim_ms"] > 0:
            self.sim.run(self.model["t_presim_ms"])

    def simulate(self) -> None:
        self.sim.run(self.model["t_sim_ms"])

    # NEST's kernel timers, read as for the native backend (PyNN has none of its own).
    def timers(self) -> dict[str, float]:
        return kernel_timers(self.nest)

    def synapses_per_projection(self) -> np.ndarray:
        """Recurrent synapses held by this rank per projection, [target, source], as PyNN counts them."""
        counts = np.zeros((len(pd14.POPULATIONS),) * 2, dtype=np.int64)
        for (s, t), projection in self.projections.items():
            counts[t, s] = len(projection)
        return counts

    def output(self) -> RankOutput:
        sim, nest = self.sim, self.nest
        senders, times = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
        if self.model["record_spikes"]:
            t_start = self.model["t_presim_ms"]
            t_stop = t_start + self.model["t_sim_ms"]
            for population in self.populations:
                # This rank's neurons only (gather=False); the parent merges the ranks.
                block = population.get_data("spikes", gather=False)
                ids = population.all_cells.astype(np.int64)
                for train in block.segments[0].spiketrains:
                    t = np.asarray(train.magnitude)
                    t = t[(t > t_start) & (t <= t_stop)]
                    senders.append(np.full(t.size, ids[train.annotations["source_index"]], dtype=np.int64))
                    times.append(t)
        build = build_info(nest)
        return RankOutput(
            rank=sim.rank(),
            num_ranks=sim.num_processes(),
            threads=nest.local_num_threads,
            local_synapses=int(self.synapses_per_projection().sum()),
            population_first_ids=[int(p[0]) for p in self.populations],
            spike_senders=np.concatenate(senders),
            spike_times_ms=np.concatenate(times),
            simulator_version=f"PyNN {self.pynn_version} on NEST {build['version']}",
            model_results=pd14_exported.identity_read(self.model),  # the digest of the network it read
            simulator_info={
                "have_mpi": bool(build["have_mpi"]),
                "threads_model": build["threads_model"],
                "detailed_timers": "time_update" in nest.GetKernelStatus(),
                "total_num_virtual_procs": nest.total_num_virtual_procs,
                "pynn_version": self.pynn_version,
                "nest_version": build["version"],
                "pynn_nest_extensions": "loaded" if self.extensions_loaded else EXTENSIONS_NOT_BUILT,
                "spike_precision": sim.simulator.state.spike_precision,
                "min_delay_ms": sim.get_min_delay(),
            },
        )
