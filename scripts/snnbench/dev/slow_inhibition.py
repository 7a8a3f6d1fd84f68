"""A dynamics bug kept outside the package, for the power of the simulator verdict (make bench-validation,
tests/e2e/test_group_verdict_run.py): PD14 on NEST with every inhibitory delay FACTOR times longer (mean
0.75 -> 1.125 ms; its spread alike). Inhibition answers excitation later, so fast excitation-inhibition
synchrony (spike-count correlations in 2 ms bins) grows while rates move little: what one run's statistics
hardly see and a group of runs shows. Registered as a simulator of its own:

    SNNBENCH_NETWORK_SIMULATORS="nest-slow-inhibition=snnbench.dev.slow_inhibition:SIMULATOR"

Measured (20 runs against 20 NEST seeds, N = K = 0.1, 1 s; docs/figures.md): correlations up 50-104 %, by
1.6-2.9 seed SDs in 7 of 8 populations; rates within 3 % but L2/3E's (+8.7 %, 0.8 SDs); 3 of 20 runs flagged one
by one, 20 of 20 groups of 10 said to differ. Tried and not taken: inhibitory delays x 2 (L2/3E's rate +60 %), and
tau_syn_in x 2 with inhibitory weights / 2 (rates moved, L5I by 4.5 SDs; no correlation by 2 SDs).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from snnbench.network.models import pd14
from snnbench.network.simulators import Simulator
from snnbench.network.simulators.nest.pd14 import NestBackend

NAME = "nest-slow-inhibition"
REGISTRY_ENTRY = f"{NAME}={__name__}:SIMULATOR"
FACTOR = 1.5
SIMULATOR = Simulator(environment="nest", builders={"pd14": f"{__name__}:SlowInhibitionBackend"})


class SlowInhibitionBackend(NestBackend):
    """NEST's PD14 with the delays of inhibitory sources' synapses times FACTOR."""

    name = NAME

    def setup(self) -> None:
        super().setup()
        inhibitory_sources = np.where(~np.array(pd14.EXCITATORY), FACTOR, 1.0)[None, :]  # columns: sources
        self.net = replace(
            self.net,
            delay_mean_ms=self.net.delay_mean_ms * inhibitory_sources,
            delay_sd_ms=self.net.delay_sd_ms * inhibitory_sources,
        )
