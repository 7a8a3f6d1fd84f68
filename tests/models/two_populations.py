"""A network model kept outside the package, for the tests of the model seam: a two-population
balanced network (Brunel 2000's model A, with exponential currents, at 1 000 neurons full size),
registered by SNNBENCH_NETWORK_MODELS="two_populations=two_populations:TwoPopulations" and built
on NEST by subclassing NEST's backend. Nothing in snnbench names it.
"""

from __future__ import annotations

import numpy as np
from snnbench.network.models.base import NetworkModel, Size
from snnbench.network.simulators.nest.pd14 import NestBackend

POPULATIONS = ("E", "I")
FULL_SIZE = (800, 200)  # neurons per population at neuron_scale 1
FULL_INDEGREE = (80, 20)  # inputs per neuron from E and from I at indegree_scale 1
J_PA = 60.0  # excitatory weight; inhibitory -g x J
G = 5.0
DELAY_MS = 1.5
DRIVE_HZ = 2500.0  # one Poisson generator per neuron, weight J: a mean drive near threshold
NEURON = {"C_m": 250.0, "tau_m": 20.0, "t_ref": 2.0, "E_L": 0.0, "V_th": 20.0, "V_reset": 10.0}

# The keys every network model's block has (snnbench.network.models.base), no others.
PARAMETERS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["indegree_scale"],
    "properties": {
        "neuron_scale": {"description": "Neurons relative to 1 000.", "type": "number", "exclusiveMinimum": 0},
        "neuron_scale_per_vp": {"description": "Neuron scale per VP.", "type": "number", "exclusiveMinimum": 0},
        "indegree_scale": {"description": "Fraction of the in-degrees.", "type": "number", "exclusiveMinimum": 0},
        "t_presim_ms": {"description": "Presimulation, ms.", "type": "number", "minimum": 0, "default": 50.0},
        "t_sim_ms": {"description": "Simulation, ms.", "type": "number", "exclusiveMinimum": 0, "default": 200.0},
        "input": {"description": "External drive.", "type": "string", "enum": ["poisson"], "default": "poisson"},
        "record_spikes": {"description": "Record spikes.", "type": "boolean", "default": True},
    },
}


def neurons(params: dict) -> np.ndarray:
    return np.maximum(1, np.round(np.array(FULL_SIZE) * params["neuron_scale"])).astype(int)


def indegrees(params: dict) -> np.ndarray:
    return np.maximum(1, np.round(np.array(FULL_INDEGREE) * params["indegree_scale"])).astype(int)


class TwoPopulations(NetworkModel):
    name = "two_populations"
    title = "two-population balanced network (test model)"
    populations = POPULATIONS
    dt_ms = 0.1
    builders = {"nest": "two_populations:TwoPopulationsNest"}
    parameter_schema = PARAMETERS

    def size(self, params: dict) -> Size:
        sizes = neurons(params)
        return Size(num_neurons=sizes, total_synapses=int(sizes.sum() * indegrees(params).sum()))

    def estimate_mem_mb(self, spec: dict) -> int:
        return 1000


class TwoPopulationsNest(NestBackend):
    def setup(self) -> None:
        self.start_kernel(TwoPopulations.dt_ms)

    def create(self) -> None:
        nest = self.nest
        self.populations = [nest.Create("iaf_psc_exp", int(n), params=NEURON) for n in neurons(self.model)]
        for population in self.populations:
            population.V_m = nest.random.uniform(0.0, NEURON["V_th"])
        self.drive = nest.Create("poisson_generator", params={"rate": DRIVE_HZ})
        self.recorder = nest.Create("spike_recorder", params={"start": self.model["t_presim_ms"]})
        self.synapse_models = []
        for name in POPULATIONS:
            nest.CopyModel("static_synapse", f"two_populations_from_{name}")
            self.synapse_models.append(f"two_populations_from_{name}")

    def connect(self) -> None:
        nest = self.nest
        # Weights scale with 1/sqrt(K) below the full in-degree, as PD14's do in snnbench.
        compensation = 1 / np.sqrt(self.model["indegree_scale"])
        for s, (source, indegree) in enumerate(zip(self.populations, indegrees(self.model), strict=True)):
            weight = J_PA * compensation * (1.0 if s == 0 else -G)
            for target in self.populations:
                nest.Connect(
                    source,
                    target,
                    {"rule": "fixed_indegree", "indegree": int(indegree)},
                    {"synapse_model": self.synapse_models[s], "weight": weight, "delay": DELAY_MS},
                )
        for target in self.populations:
            nest.Connect(self.drive, target, syn_spec={"weight": J_PA, "delay": DELAY_MS})
            nest.Connect(target, self.recorder)
