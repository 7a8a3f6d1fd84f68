"""The multi-area model on NEST: the kernel, phases, timers and output of NEST's PD14 backend, with the
network read from the model's derived description (snnbench.network.models.multi_area). snnbench's own
builder, not INM-6's simulation class (that one is the reference simulator, nest-inm6): each projection
a fixed total number of synapses, weights and delays drawn from normal distributions and redrawn into
their bounds, one Poisson source per population, and Poisson input in place of each non-simulated
area's population. Threads, MPI ranks and nodes as for PD14."""

from __future__ import annotations

import numpy as np

from snnbench.network.models import multi_area
from snnbench.network.simulators.nest.pd14 import NestBackend

RECURRENT = "multi_area_recurrent"  # a copy of static_synapse: its count is the recurrent synapses


def bounded(low, high) -> dict:
    """NEST's redraw bounds of a description's (None = unbounded)."""
    return {"min": -np.inf if low is None else low, "max": np.inf if high is None else high}


class MultiAreaNest(NestBackend):
    def setup(self) -> None:
        self.start_kernel(multi_area.DT_MS)
        self.description = multi_area.description(self.model, self.spec["model_name"], set_aside_damaged=True)
        self.simulated = [i for i, p in enumerate(self.description["populations"]) if p["simulated"]]

    def create(self) -> None:
        nest, desc = self.nest, self.description
        neuron, start = desc["neuron"], desc["neuron"]["V_m_init"]
        self.populations, self.index = [], {}
        for i in self.simulated:
            population = desc["populations"][i]
            created = nest.Create(
                neuron["model"], population["n"], params={**neuron["params"], "I_e": population["I_e"]}
            )
            created.V_m = nest.random.normal(start["mean"], start["sd"])
            self.index[i] = len(self.populations)
            self.populations.append(created)
        rates = [desc["populations"][i]["ext_poisson"]["rate_total"] for i in self.simulated]
        self.external = nest.Create("poisson_generator", len(rates), params=[{"rate": r} for r in rates])
        self.replacing = multi_area.merged_replacements(desc)
        rates = [{"rate": r["rate_total"]} for r in self.replacing]
        self.replacements = nest.Create("poisson_generator", len(rates), params=rates) if rates else []
        if self.model["record_spikes"]:
            self.recorder = nest.Create("spike_recorder", params={"start": self.model["t_presim_ms"]})
        nest.CopyModel("static_synapse", RECURRENT)
        self.synapse_models = [RECURRENT]

    def connect(self) -> None:
        nest, desc = self.nest, self.description
        for projection in desc["projections"]:
            weight = nest.math.redraw(
                nest.random.normal(projection["w_mean"], projection["w_sd"]),
                **bounded(projection["w_min"], projection["w_max"]),
            )
            delay = nest.math.redraw(
                nest.random.normal(projection["d_mean"], projection["d_sd"]), **bounded(projection["d_min"], None)
            )
            nest.Connect(
                self.populations[self.index[projection["source"]]],
                self.populations[self.index[projection["target"]]],
                conn_spec={"rule": "fixed_total_number", "N": projection["n_syn"]},
                syn_spec={"synapse_model": RECURRENT, "weight": weight, "delay": delay},
            )
        for k, i in enumerate(self.simulated):
            external = desc["populations"][i]["ext_poisson"]
            syn = {"weight": external["weight"], "delay": external["delay"]}
            nest.Connect(self.external[k], self.populations[k], "all_to_all", syn)
            if self.model["record_spikes"]:
                nest.Connect(self.populations[k], self.recorder)
        for k, replacement in enumerate(self.replacing):
            syn = {"weight": replacement["weight"], "delay": replacement["delay"]}
            nest.Connect(self.replacements[k], self.populations[self.index[replacement["target"]]], "all_to_all", syn)
