"""hpc_benchmark on NEST: the kernel, phases, timers and output of NEST's PD14 backend, with
this model's network."""

from __future__ import annotations

import numpy as np

from snnbench.network.models import hpc_benchmark as hpc
from snnbench.network.simulators.nest.pd14 import NestBackend, neuron_params

PLASTIC = "hpc_benchmark_ee"


class HpcBenchmarkNest(NestBackend):
    def setup(self) -> None:
        self.start_kernel(hpc.DT_MS)
        self.net = hpc.derive(self.model["neuron_scale"], self.model["indegree_scale"])

    def create(self) -> None:
        nest, net = self.nest, self.net
        params = neuron_params(hpc.NEURON)
        self.populations = [nest.Create("iaf_psc_alpha", int(n), params=params) for n in net.num_neurons]
        for population in self.populations:
            population.V_m = nest.random.normal(hpc.V0_MEAN_MV, hpc.V0_SD_MV)
        self.drive = nest.Create("poisson_generator", params={"rate": net.external_rate_hz})
        if self.model["record_spikes"]:
            self.recorder = nest.Create("spike_recorder", params={"start": self.model["t_presim_ms"]})
        nest.CopyModel("stdp_pl_synapse_hom", PLASTIC, {**hpc.STDP, "weight": net.weight_exc_pA})
        nest.CopyModel("static_synapse", "hpc_benchmark_from_E", {"weight": net.weight_exc_pA})
        nest.CopyModel("static_synapse", "hpc_benchmark_from_I", {"weight": net.weight_inh_pA})
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
            nest.Connect(self.drive, population, syn_spec={"weight": net.weight_exc_pA, **delay})
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
        out.model_results = {"ee_weights": hpc.weight_summary(values, self.net.weight_exc_pA)}
        return out
