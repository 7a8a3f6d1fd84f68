"""A simulator kept outside the package with an environment of its own, for the test of the simulator seam
(tests/e2e/test_plugin_environment_run.py): `poisson-pd14`, a numpy-only stand-in for PD14 that connects no
synapse and draws each neuron's spikes as a Poisson train at its population's rate (the published rates of the
model's size where they exist, else those of the full model). Registered by
SNNBENCH_NETWORK_SIMULATORS="poisson-pd14=poisson_plugin:SIMULATOR"; its environment is envs/poisson-pd14.yaml
beside this module, found through SNNBENCH_ENVIRONMENTS=<that folder>. What adding it took: this module, the
registry entry (the variable) and the environment file. Nothing in snnbench names it.
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np
from snnbench.network.models import pd14
from snnbench.network.simulators import Simulator
from snnbench.network.simulators.base import Backend, RankOutput

SIMULATOR = Simulator(
    environment="poisson-pd14",
    builders={"pd14": "poisson_plugin:PoissonBackend"},
    detailed_timers={"draw": "poisson_draw"},
)
VERSION = "1"


class PoissonBackend(Backend):
    """PD14's populations without their synapses: independent Poisson spike trains, one per neuron."""

    name = "poisson-pd14"

    def setup(self) -> None:
        self.net = pd14.network(self.model)
        self.rng = np.random.default_rng(self.spec["seed"])
        found = pd14.reference_rates(self.model["neuron_scale"], self.model["indegree_scale"], self.model["input"])
        self.rates_hz = np.array(list(found[0].values())) if found else pd14.FULL_MEAN_RATES_HZ
        self.draw_s = 0.0

    def create(self) -> None:
        sizes = self.net.num_neurons
        self.first_ids = (1 + np.concatenate([[0], np.cumsum(sizes)[:-1]])).astype(int)  # NEST's ids start at 1

    def connect(self) -> None:
        pass  # a stand-in: no synapse

    def prepare(self) -> None:
        pass

    def presimulate(self) -> None:
        pass  # Poisson trains have no transient: nothing to discard

    def simulate(self) -> None:
        start = time.perf_counter()
        t0, t_sim = self.model["t_presim_ms"], self.model["t_sim_ms"]
        senders, times = [], []
        for first, size, rate in zip(self.first_ids, self.net.num_neurons, self.rates_hz, strict=True):
            counts = self.rng.poisson(rate * t_sim * 1e-3, size)
            senders.append(np.repeat(np.arange(first, first + size), counts))
            times.append(t0 + self.rng.uniform(0.0, t_sim, counts.sum()))
        order = np.argsort(np.concatenate(times), kind="stable")
        self.senders, self.times = np.concatenate(senders)[order], np.concatenate(times)[order]
        self.draw_s += time.perf_counter() - start

    def timers(self) -> dict[str, float]:
        return {"poisson_draw": self.draw_s}

    def output(self) -> RankOutput:
        recorded = self.model["record_spikes"]
        return RankOutput(
            rank=0,
            num_ranks=1,
            threads=1,
            local_synapses=0,
            population_first_ids=self.first_ids.tolist(),
            spike_senders=self.senders.astype(np.int64) if recorded else np.zeros(0, dtype=np.int64),
            spike_times_ms=self.times if recorded else np.zeros(0),
            simulator_version=f"poisson-pd14 {VERSION} (numpy {np.__version__})",
            simulator_info={"python": platform.python_version(), "executable": sys.executable},
        )
