"""PD14 on NEST (PyNEST), threads and MPI ranks."""

from __future__ import annotations

import numpy as np

from snnbench.network.models import pd14, pd14_exported
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.network.simulators.nest_kernel import NestRunPhases, build_info

# A model's neuron parameters (NEURON in its module, with units in the names) by NEST's names.
NEST_NAMES = {
    "C_m_pF": ("C_m",),
    "tau_m_ms": ("tau_m",),
    "tau_syn_ms": ("tau_syn_ex", "tau_syn_in"),
    "t_ref_ms": ("t_ref",),
    "E_L_mV": ("E_L",),
    "V_th_mV": ("V_th",),
    "V_reset_mV": ("V_reset",),
    "tau_minus_ms": ("tau_minus",),
}


def neuron_params(neuron: dict) -> dict:
    """The NEST parameters of a model's neuron; a parameter without a NEST name is an error, never
    left out."""
    unknown = sorted(set(neuron) - set(NEST_NAMES))
    if unknown:
        raise KeyError(f"neuron parameters without a NEST name (NEST_NAMES in {__name__}): {unknown}")
    return {nest_name: value for key, value in neuron.items() for nest_name in NEST_NAMES[key]}


class NestBackend(NestRunPhases, Backend):
    name = "nest"
    library_package = "nest"
    exported = None  # a network NEST exported (pd14.network_seed); a model's builder that reads none keeps None

    def setup(self) -> None:
        self.start_kernel(pd14.DT_MS)
        self.net = pd14.network(self.model)
        # A network NEST exported once (network_seed), else the one drawn here from the point's seed.
        self.exported = pd14_exported.read(self.model)

    def start_kernel(self, resolution_ms: float) -> None:
        """NEST's kernel for this point: threads, resolution, seed (every model's builder on NEST)."""
        import nest  # imported here so that the import is timed as part of setup

        self.nest = nest
        if hasattr(nest, "VerbosityLevel"):  # NEST 3.10 on
            nest.verbosity = nest.VerbosityLevel.WARNING
        else:  # the releases before (builds axis: NEST 3.8's tree), where 3.10 deprecates it
            nest.set_verbosity("M_WARNING")
        nest.ResetKernel()
        nest.local_num_threads = self.spec["resources"]["threads_per_rank"]
        nest.resolution = resolution_ms
        nest.rng_seed = self.spec["seed"]

    def create(self) -> None:
        nest, net = self.nest, self.net
        self.populations = []
        for i, size in enumerate(net.num_neurons):
            population = nest.Create(
                "iaf_psc_exp",
                size,
                params={**neuron_params(pd14.NEURON), "I_e": net.dc_amp_pA[i]},
            )
            if self.exported is None:
                population.V_m = nest.random.normal(pd14.V0_MEAN_MV[i], pd14.V0_SD_MV[i])
            else:
                population.V_m = self.exported.initial_potentials()[i]
            self.populations.append(population)
        if net.input == "poisson":
            self.generators = nest.Create("poisson_generator", len(pd14.POPULATIONS))
            self.generators.rate = net.poisson_rate_hz.tolist()
        if self.model["record_spikes"]:
            # Record the measured window only: the presimulation is the start-up transient.
            self.recorder = nest.Create("spike_recorder", params={"start": self.model["t_presim_ms"]})
        # One synapse-model copy per source population keeps each model below NEST's limit of
        # about 134 M connections per virtual process and synapse model (full scale, few VPs).
        self.synapse_models = []
        for name in pd14.POPULATIONS:
            model = f"pd14_from_{name}"
            nest.CopyModel("static_synapse", model)
            self.synapse_models.append(model)

    def connect(self) -> None:
        if self.exported is None:
            self.draw_connections()
        else:
            self.connect_exported()
        for i, target in enumerate(self.populations):
            if self.net.input == "poisson":
                self.nest.Connect(
                    self.generators[i],
                    target,
                    "all_to_all",
                    {"weight": self.net.weight_ext_pA, "delay": pd14.DELAY_EXT_MS},
                )
            if self.model["record_spikes"]:
                self.nest.Connect(target, self.recorder)

    def connect_exported(self) -> None:
        """The exported synapses, one call per source population (its synapse model), as arrays."""
        nest, network = self.nest, self.exported
        first_id = int(self.populations[0][0].global_id)
        source_population = network.population_of(network.source)
        for s, model in enumerate(self.synapse_models):
            chosen = source_population == s
            nest.Connect(
                network.source[chosen].astype(np.int64) + first_id,
                network.target[chosen].astype(np.int64) + first_id,
                conn_spec="one_to_one",
                syn_spec={
                    "synapse_model": model,
                    "weight": network.weight_pA[chosen],
                    "delay": network.delay_ms[chosen],
                },
            )

    def draw_connections(self) -> None:
        nest, net = self.nest, self.net
        for t, target in enumerate(self.populations):
            for s, source in enumerate(self.populations):
                if net.num_synapses[t, s] == 0:
                    continue
                mean_w, sd_w = net.weight_mean_pA[t, s], net.weight_sd_pA[t, s]
                # Weights and delays are redrawn (not clipped) until they have the right sign / exceed dt.
                weight = nest.math.redraw(
                    nest.random.normal(mean_w, sd_w),
                    min=0.0 if mean_w > 0 else -np.inf,
                    max=np.inf if mean_w > 0 else 0.0,
                )
                delay = nest.math.redraw(
                    nest.random.normal(net.delay_mean_ms[t, s], net.delay_sd_ms[t, s]),
                    min=pd14.DT_MS - 0.5 * pd14.DT_MS,
                    max=np.inf,
                )
                nest.Connect(
                    source,
                    target,
                    conn_spec={"rule": "fixed_total_number", "N": int(net.num_synapses[t, s])},
                    syn_spec={"synapse_model": self.synapse_models[s], "weight": weight, "delay": delay},
                )

    def output(self) -> RankOutput:
        nest = self.nest
        if self.model["record_spikes"]:
            events = self.recorder.get("events")
            senders, times = np.asarray(events["senders"]), np.asarray(events["times"])
        else:
            senders, times = np.zeros(0, dtype=int), np.zeros(0)
        build = build_info(nest)
        return RankOutput(
            rank=nest.Rank(),
            num_ranks=nest.NumProcesses(),
            threads=nest.local_num_threads,
            local_synapses=int(sum(nest.GetDefaults(m, "num_connections") for m in self.synapse_models)),
            population_first_ids=[int(p[0].global_id) for p in self.populations],
            spike_senders=senders.astype(np.int64),
            spike_times_ms=times.astype(float),
            simulator_version=build["version"],
            spike_counter=getattr(self, "spike_counter", None),
            model_results=pd14_exported.identity_read(self.model),  # the digest of the network it read
            simulator_info={
                "have_mpi": bool(build["have_mpi"]),
                "threads_model": build["threads_model"],
                "detailed_timers": "time_update" in nest.GetKernelStatus(),
                "total_num_virtual_procs": nest.total_num_virtual_procs,
                "mpi_library": mpi_library() if build["have_mpi"] else None,
            },
        )


def mpi_library() -> str | None:
    """The MPI library's own version string (Open MPI, MPICH, ...), via mpi4py where installed."""
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.Get_library_version().strip().splitlines()[0]
