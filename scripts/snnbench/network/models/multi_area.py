"""The multi-area model of macaque visual cortex (Schmidt et al. 2018, Brain Struct. Funct. 223:1409 and
PLoS Comput. Biol. 14:e1006359; INM-6/multi-area-model v1.2.0): 32 areas, each a layered microcircuit of
up to eight populations (254 in all; TH has no layer 4), 4.13 M neurons and 24.1e9 synapses at full
scale, in a ground state and a metastable state (cortico-cortical weight factors chi = 1.9 and
chi_I = 2.0 onto inhibitory targets). beNNch's strong-scaling model.

The network is data before it is a simulation: INM-6's code derives it once per (neuron and in-degree
scale, state, simulated areas) into a description (rule describe_network in the model's own
environment, snnbench.network.models.multi_area_derive), and every builder reads that file:

  populations[i]      area, pop, simulated, n (neurons), I_e (pA, the DC compensation), ext_poisson
                      {rate_total (spikes/s of one Poisson source for the population), weight (pA),
                      delay (ms)}
  projections[j]      target, source (indices into populations), n_syn (a fixed total number, sources
                      and targets drawn with replacement), w_mean and w_sd (pA; normal, redrawn into
                      [w_min, w_max], None = unbounded), d_mean and d_sd (ms; normal, redrawn above
                      d_min = dt)
  replacement_inputs  Poisson input in place of each non-simulated area's population (INM-6's
                      het_poisson_stat): target, rate_total, weight, delay
  neuron              NEST's iaf_psc_exp parameters and the initial membrane potential (normal)
  theory              the mean-field rates of INM-6's theory (spikes/s per area-population)
  totals              neurons and synapses of the simulated areas
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from snnbench.network.models.base import NetworkModel, Size, parameter_block
from snnbench.network.models.multi_area_derive import STATES
from snnbench.paths import NETWORK_DESCRIPTION
from snnbench.records import inputs

# The 32 areas (INM-6's complete_area_list; Felleman & Van Essen's naming).
AREAS = (
    "V1", "V2", "VP", "V3", "V3A", "MT", "V4t", "V4", "VOT", "MSTd", "PIP", "PO", "DP", "MIP", "MDP", "VIP",
    "LIP", "PITv", "PITd", "MSTl", "CITv", "CITd", "FEF", "TF", "AITv", "FST", "7a", "STPp", "STPa", "46",
    "AITd", "TH",
)  # fmt: skip
POPULATION_TYPES = ("23E", "23I", "4E", "4I", "5E", "5I", "6E", "6I")
DT_MS = 0.1
INM6 = "nest-inm6"  # INM-6's own simulation (snnbench.network.simulators.inm6): it builds its network itself
# Memory per neuron and per synapse on NEST, with PD14's headroom, the interpreter and NEST itself beside them:
# the synapse PD14's measured figure (snnbench.network.models.pd14: the same static synapses), the neuron
# fitted to this model's peaks (NEST 3.10, one rank, 2026-11-26: 4 732 MB at N = K = 0.02 and 5 742-5 994 MB at
# 0.025, all areas): 51 kB, above PD14's 38 kB (its inter-area delays make longer spike ring buffers).
INTERPRETER_MB, NEURON_MB, SYNAPSE_MB, HEADROOM, WRAPPER_MB = 155, 51e-3, 38e-6, 1.1, 60

PARAMETERS = parameter_block(
    "Multi-area model parameters (INM-6/multi-area-model v1.2.0).",
    neuron_scale=(
        "N_scaling: neurons relative to the 4.13 M of the full model (strong scaling). INM-6's compensation "
        "keeps each neuron's mean and variance of input (weights x 1/sqrt(indegree_scale), DC drive)."
    ),
    indegree_scale="K_scaling: fraction of the full in-degrees.",
    inputs={"poisson": "one Poisson source per population (10 spikes/s per external synapse)"},
)
PARAMETERS["properties"]["state"] = {
    "description": "ground (chi = 1) or metastable (chi = 1.9, chi_I = 2.0: Schmidt et al. 2018).",
    "type": "string",
    "enum": list(STATES),
    "default": "ground",
}
PARAMETERS["properties"]["areas_simulated"] = {
    "description": (
        "The areas simulated (default: all 32); the others are replaced by Poisson input at their full-scale "
        "rates (INM-6's het_poisson_stat)."
    ),
    "type": "array",
    "minItems": 1,
    "uniqueItems": True,
    "items": {"type": "string", "enum": list(AREAS)},
}
PARAMETERS["properties"]["perturbation"] = {
    "description": (
        "A deliberate change of the model, to measure what validation detects (its power; make bench-validation), "
        "applied by the builders that read the description (not INM-6's own code). Unset: the model as published."
    ),
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "weight_scale": {
            "description": "Every recurrent weight (within and between areas) times this: mean, spread and bounds.",
            "type": "number",
            "exclusiveMinimum": 0,
        }
    },
}


def areas_of(params: dict) -> list[str]:
    """The simulated areas in the model's order."""
    chosen = set(params.get("areas_simulated") or AREAS)
    return [area for area in AREAS if area in chosen]


def description_key(params: dict) -> str:
    """The folder of a description: N<scale>_K<scale>_<state>_<areas> (`all`, or the areas joined by '+')."""
    areas = areas_of(params)
    named = "all" if len(areas) == len(AREAS) else "+".join(areas)
    return f"N{params['neuron_scale']:g}_K{params['indegree_scale']:g}_{params['state']}_{named}"


def description_params(params: dict) -> dict:
    """What the derivation is given (what defines the description, nothing about the run)."""
    return {
        "neuron_scale": params["neuron_scale"],
        "indegree_scale": params["indegree_scale"],
        "state": params["state"],
        "areas_simulated": areas_of(params),
        "dt_ms": DT_MS,
    }


@functools.cache
def _read(path: Path, mtime_ns: int, set_aside_damaged: bool) -> dict:
    return inputs.read_json(path, set_aside_damaged)


def description(params: dict, name: str, set_aside_damaged: bool = False) -> dict:
    """The derived description of a point's network, the digest of its bytes noted (FileNotFoundError until
    rule describe_network made it; inputs.DamagedInput where it is cut short, set aside first where
    set_aside_damaged: in the builders, where a point reads it)."""
    path = Path(NETWORK_DESCRIPTION.format(model=name, description=description_key(params))).resolve()
    # read once per file and version, wherever the process stands
    return perturbed(_read(path, path.stat().st_mtime_ns, set_aside_damaged), params)


def perturbed(desc: dict, params: dict) -> dict:
    """The description with the experiment's `perturbation` applied (a new dict: the read one is cached)."""
    scale = (params.get("perturbation") or {}).get("weight_scale", 1.0)
    if scale == 1.0:
        return desc

    def times(value):
        return None if value is None else value * scale

    keys = ("w_mean", "w_sd", "w_min", "w_max")
    projections = [{**p, **{key: times(p[key]) for key in keys}} for p in desc["projections"]]
    return {**desc, "projections": projections}


def simulated(desc: dict) -> list[dict]:
    return [p for p in desc["populations"] if p["simulated"]]


def merged_replacements(desc: dict) -> list[dict]:
    """The replacement inputs of a description, those of one target population with the same weight
    summed into one Poisson source (a sum of independent Poisson processes of one weight is one of
    the summed rate; their delays, which shift a stationary input, are left out: the shortest is
    kept). INM-6's simulation makes one per source population (262 for V1 and V2 at 0.01, each drawn
    for every target neuron at every step); a builder of snnbench makes these (16 there)."""
    merged: dict[tuple[int, float], dict] = {}
    for replacement in desc["replacement_inputs"]:
        key = (replacement["target"], replacement["weight"])
        entry = merged.setdefault(key, {**replacement, "rate_total": 0.0, "sources": 0})
        entry["rate_total"] += replacement["rate_total"]
        entry["delay"] = min(entry["delay"], replacement["delay"])
        entry["sources"] += 1
    return [{k: v for k, v in entry.items() if k not in ("source_area", "source_pop")} for entry in merged.values()]


def population_name(population: dict) -> str:
    return f"{population['area']}-{population['pop']}"


class MultiArea(NetworkModel):
    name = "multi_area_model"
    title = "multi-area model (Schmidt et al. 2018)"
    dt_ms = DT_MS
    parameter_schema = PARAMETERS
    description_environment = "multi-area-model"
    # Named in rule describe_network's params: renaming the module would derive every description again and
    # rerun the points that read them.
    description_module = "snnbench.network.models.multi_area_derive"
    reference_simulator = INM6  # INM-6's own simulation of the same description
    figures = {"areas": ["area_rates", "rates_against_reference"]}  # snnbench.figures.areas
    # Its builders are the simulators' (nest, genn, genn-cpu, nest-inm6: snnbench.network.simulators).

    def description_key(self, params: dict) -> str | None:
        return description_key(params)

    def description_params(self, params: dict) -> dict:
        return description_params(params)

    def populations_of(self, params: dict) -> tuple[str, ...]:
        return tuple(population_name(p) for p in simulated(description(params, self.name)))

    def size(self, params: dict) -> Size:
        desc = description(params, self.name)
        neurons = np.array([p["n"] for p in simulated(desc)])
        return Size(num_neurons=neurons, total_synapses=desc["totals"]["synapses"])

    def predicted_rates(self, params: dict) -> dict[str, float]:
        """The mean-field rates of INM-6's theory for the simulated populations (spikes/s)."""
        rates = description(params, self.name)["theory"]["rates_hz"]
        return {name: rates[name] for name in self.populations_of(params)}

    def results(self, params: dict, rank_results: list[dict]) -> dict:
        return {"theory_rates_hz": self.predicted_rates(params)}

    def table_columns(self, results: dict) -> dict:
        """The theory's rate of each population beside its measured one."""
        return {f"theory_rate_{name}_hz": rate for name, rate in results.get("theory_rates_hz", {}).items()}

    def activity_rates(self, params: dict, results: dict) -> dict | None:
        """The mean-field rates of INM-6's theory (the record's model_results, else the description's), as a
        ceiling only: down-scaled networks fire far below them, INM-6's own runs included (V1-23E at N = K =
        0.01 with V1 and V2 simulated: 0.32-0.39 spikes/s against the theory's 12.8, 35x below), so the floor
        stays the config's and a reference ensemble's."""
        rates = results.get("theory_rates_hz") or self.predicted_rates(params)
        return {"rates_hz": rates, "source": "INM-6's mean-field theory (Theory.integrate_siegert)", "upper_only": True}

    def activity_problems(self, params: dict, populations: list[dict], results: dict) -> list[str]:
        """No silent area (the populations' bounds are the config's)."""
        spikes: dict[str, int] = {}
        for row in populations:
            area = row["population"].split("-", 1)[0]
            spikes[area] = spikes.get(area, 0) + row["spikes"]
        return [f"area {area} silent (no spike)" for area, count in spikes.items() if count == 0]

    def check(self, where: str, experiment: dict, params: list[dict]) -> list[str]:
        """Down-scaled sizes that leave a population without neurons (the simulation's int(N) of the smallest,
        VIP-6I, is 0 below 1 / MIN_FULL_POPULATION); a perturbation asked of INM-6's own code, which builds its
        network itself."""
        problems = []
        smallest = min(p["neuron_scale"] for p in params)
        if smallest * MIN_FULL_POPULATION < 1:
            problems.append(
                f"{where}: {self.name}.neuron_scale {smallest:g} leaves populations without neurons; the smallest "
                f"scale with one in each is {1 / MIN_FULL_POPULATION:.1e}"
            )
        if INM6 in experiment.get("simulators", []) and any(p.get("perturbation") for p in params):
            problems.append(f"{where}: {self.name}.perturbation cannot change {INM6}: INM-6's code builds its own")
        return problems

    def estimate_mem_mb(self, spec: dict) -> int:
        """Memory per node from the description's neurons and synapses (read when it exists: SLURM's
        request is made once rule describe_network has run)."""
        totals, res = description(spec["model"], self.name)["totals"], spec["resources"]
        network = (totals["neurons"] * NEURON_MB + totals["synapses"] * SYNAPSE_MB) / res["nodes"]
        return math.ceil(HEADROOM * (res["ranks_per_node"] * INTERPRETER_MB + network)) + WRAPPER_MB


# The smallest population of the full model (VIP-6I, neurons before int()): below 1 / this neuron scale
# it has none. Read off the v1.2.0 description at full scale (snnbench.network.models.multi_area_derive).
MIN_FULL_POPULATION = 1610.6
