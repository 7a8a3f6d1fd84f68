"""The multi-area model on PyGeNN (`genn`, `genn-cpu`): the PD14 builder's phases, timers and output with
the network read from the model's derived description (snnbench.network.models.multi_area), as NEST's
builder reads it: GeNN's LIF neurons with exponential currents and the description's DC drive, normal
initial potentials, a fixed total number of synapses per projection (GeNN's
FixedNumberTotalWithReplacement) with normal weights clipped to their bounds and normal delays redrawn
below one step, and Poisson input as current sources (GeNN's PoissonExp): one per population for its
external drive and one per non-simulated area's population that replaces it (their delays, which
change nothing in a stationary Poisson input, are not modelled). With `genn: {procedural_connectivity:
true}` on the CUDA backend the connectivity is regenerated at every spike, as Knight & Nowotny (2021)
ran the whole model on one GPU."""

from __future__ import annotations

import numpy as np

from snnbench.network.models import multi_area
from snnbench.network.simulators.genn.pd14 import GennBackend


class MultiAreaGenn(GennBackend):
    dt_ms = multi_area.DT_MS

    def derive(self) -> None:
        self.description = multi_area.description(self.model, self.spec["model_name"], set_aside_damaged=True)
        self.simulated = [i for i, p in enumerate(self.description["populations"]) if p["simulated"]]
        self.index = {i: k for k, i in enumerate(self.simulated)}
        self.sizes = [self.description["populations"][i]["n"] for i in self.simulated]

    def neuron_populations(self) -> list[dict]:
        desc = self.description
        neuron, start = desc["neuron"]["params"], desc["neuron"]["V_m_init"]
        replacing: dict[int, list] = {}
        for replacement in multi_area.merged_replacements(desc):
            drive = (replacement["weight"], neuron["tau_syn_ex"], replacement["rate_total"])
            replacing.setdefault(replacement["target"], []).append(drive)
        found = []
        for i in self.simulated:
            population = desc["populations"][i]
            external = population["ext_poisson"]
            drives = (
                [(external["weight"], neuron["tau_syn_ex"], external["rate_total"])] if external["rate_total"] else []
            )
            params = {
                "C": neuron["C_m"],
                "TauM": neuron["tau_m"],
                "Vrest": neuron["E_L"],
                "Vreset": neuron["V_reset"],
                "Vthresh": neuron["V_th"],
                "Ioffset": population["I_e"],
                "TauRefrac": neuron["t_ref"],
            }
            found.append(
                {
                    "name": multi_area.population_name(population).replace("-", "_"),
                    "size": population["n"],
                    "params": params,
                    "v0": (start["mean"], start["sd"]),
                    "drives": drives + replacing.get(i, []),
                }
            )
        return found

    def projections(self) -> list[dict]:
        desc, largest = self.description, float(np.finfo(np.float32).max)
        names = [multi_area.population_name(p).replace("-", "_") for p in desc["populations"]]
        tau_syn = desc["neuron"]["params"]["tau_syn_ex"]
        return [
            {
                "name": f"{names[p['source']]}_to_{names[p['target']]}",
                "source": self.index[p["source"]],
                "target": self.index[p["target"]],
                "n": p["n_syn"],
                "weight": (p["w_mean"], p["w_sd"]),
                "bounds": (
                    -largest if p["w_min"] is None else p["w_min"],
                    largest if p["w_max"] is None else p["w_max"],
                ),
                "delay": (p["d_mean"], p["d_sd"]),
                "min_steps": p["d_min"] / self.dt_ms,
                "tau_syn_ms": tau_syn,
            }
            for p in desc["projections"]
        ]
