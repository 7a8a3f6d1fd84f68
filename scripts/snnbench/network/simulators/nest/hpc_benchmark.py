"""hpc_benchmark on NEST: the kernel, phases, timers and output of NEST's PD14 backend, with
this model's network."""

from __future__ import annotations

import math

import numpy as np

from snnbench.network.models import hpc_benchmark as hpc
from snnbench.network.simulators.nest.pd14 import NestBackend, neuron_params

PLASTIC = "hpc_benchmark_ee"
# NEST's example connects with the `_hpc` variants of its synapse models: a 2-byte thread-local index
# of the target instead of a pointer. Measured here (docs/hpc_benchmark.md): 22 % less simulation time
# and 16 B less per synapse. They address at most 65 534 nodes per thread (NEST's max_targetindex),
# so a larger network per virtual process takes the plain models.
HPC_MAX_NODES_PER_THREAD = 65534
DEVICES_PER_THREAD = 2  # the Poisson drive and the spike recorder, replicated on every thread


def synapse_variant(num_neurons: int, virtual_processes: int) -> str:
    """The suffix of NEST's synapse models for this network: '_hpc' where every thread's nodes fit its index."""
    per_thread = math.ceil(num_neurons / virtual_processes) + DEVICES_PER_THREAD
    return "_hpc" if per_thread <= HPC_MAX_NODES_PER_THREAD else ""


class HpcBenchmarkNest(NestBackend):
    def setup(self) -> None:
        self.start_kernel(hpc.DT_MS)
        self.net = hpc.network(self.model)

    def create(self) -> None:
        nest, net = self.nest, self.net
        params = neuron_params(hpc.NEURON)
        self.populations = [nest.Create("iaf_psc_alpha", int(n), params=params) for n in net.num_neurons]
        for population in self.populations:
            population.V_m = nest.random.normal(hpc.V0_MEAN_MV, hpc.V0_SD_MV)
        self.drive = nest.Create("poisson_generator", params={"rate": net.external_rate_hz})
        if self.model["record_spikes"]:
            self.recorder = nest.Create("spike_recorder", params={"start": self.model["t_presim_ms"]})
        variant = synapse_variant(int(net.num_neurons.sum()), nest.total_num_virtual_procs)
        self.base_models = plastic, static = f"stdp_pl_synapse_hom{variant}", f"static_synapse{variant}"
        nest.CopyModel(plastic, PLASTIC, {**hpc.STDP, "weight": net.weight_exc_pA})
        nest.CopyModel(static, "hpc_benchmark_from_E", {"weight": net.weight_exc_pA})
        nest.CopyModel(static, "hpc_benchmark_from_I", {"weight": net.weight_inh_pA})
        # The drive's connections have a model of their own: not counted among the network's synapses.
        nest.CopyModel(static, "hpc_benchmark_drive", {"weight": net.weight_exc_pA})
        self.synapse_models = [PLASTIC, "hpc_benchmark_from_E", "hpc_benchmark_from_I"]

    def connect(self) -> None:
        nest, net = self.nest, self.net
        exc, inh = self.populations
        delay = {"delay": hpc.DELAY_MS}
        for targets, source, indegree, model in (
            (exc, exc, net.indegree[0], PLASTIC),
            (inh, exc, net.indegree[0], "hpc_benchmark_from_E"),
            (exc, inh, net.indegree[1], "hpc_benchmark_from_I"),
            (inh, inh, net.indegree[1], "hpc_benchmark_from_I"),
        ):
            rule = {"rule": "fixed_indegree", "indegree": int(indegree), "allow_autapses": False}
            nest.Connect(source, targets, rule, {"synapse_model": model, **delay})
        for population in self.populations:
            nest.Connect(self.drive, population, syn_spec={"synapse_model": "hpc_benchmark_drive", **delay})
            if self.model["record_spikes"]:
                nest.Connect(population, self.recorder)

    def output(self):
        out = super().output()
        # This rank's part of the sampled E->E weights after the run (the model's results() merges
        # the ranks), read a few targets at a time: PyNEST's read holds ~2.6 kB per synapse.
        sample = self.populations[0][: hpc.WEIGHT_SAMPLE_TARGETS]
        parts = [np.zeros(0)]
        for start in range(0, len(sample), 10):
            connections = self.nest.GetConnections(target=sample[start : start + 10], synapse_model=PLASTIC)
            if len(connections):
                parts.append(np.atleast_1d(np.asarray(connections.get("weight"), dtype=float)))
        values = np.concatenate(parts)
        out.model_results = {
            "ee_weights": hpc.weight_summary(values, self.net.weight_exc_pA),
            "nest_synapse_models": list(self.base_models),
        }
        return out
