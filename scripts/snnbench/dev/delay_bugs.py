"""Dynamics bugs kept outside the package, for the power of the simulator verdict (make bench-validation,
tests/e2e/test_group_verdict_run.py): PD14 on NEST with the delays of one kind of source scaled (their mean and
spread alike). Each is a simulator of its own, registered as a plugin:

    SNNBENCH_NETWORK_SIMULATORS="nest-fast-excitation=snnbench.dev.delay_bugs:FAST_EXCITATION"

- FAST_EXCITATION: every excitatory delay x 0.5 (mean 1.5 -> 0.75 ms, the inhibitory one): excitation arrives as
  early as inhibition, so fast excitation-inhibition synchrony (spike-count correlations in 2 ms bins) grows while
  rates move little. Measured at N = K = 0.1, 1 s, 20 runs against 20 NEST seeds (docs/figures.md): correlations
  up by 2.1-3.1 seed SDs in 7 of 8 populations (L6E +0.3), every population's rate within 4 % of NEST's; 7 of 20
  runs flagged one by one, 20 of 20 groups of 10 said to differ.
- SLOW_INHIBITION: every inhibitory delay x 1.5 (0.75 -> 1.125 ms): the same direction, weaker; correlations by
  1.6-2.9 seed SDs in 7 of 8 populations (2 or more in 3), L2/3E's rate +8.7 %.

Tried and not taken (6 runs each, docs/figures.md): inhibitory delays x 2 (L2/3E's rate +47 %), x 0.5; excitatory
delays x 0.6 (correlations by 2 SDs in 1 of 8) and x 1.5; delays without spread; synaptic time constants at equal
charge (all, excitatory, inhibitory x 2 and x 3).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from snnbench.network.models import pd14
from snnbench.network.simulators import Simulator
from snnbench.network.simulators.nest.pd14 import NestBackend


class ScaledDelaysBackend(NestBackend):
    """NEST's PD14 backend with the delays of excitatory (or inhibitory) sources' synapses times FACTOR."""

    EXCITATORY_SOURCES = True
    FACTOR = 1.0

    def setup(self) -> None:
        super().setup()
        chosen = np.array(pd14.EXCITATORY) == self.EXCITATORY_SOURCES
        scale = np.where(chosen, self.FACTOR, 1.0)[None, :]  # columns: sources
        self.net = replace(
            self.net, delay_mean_ms=self.net.delay_mean_ms * scale, delay_sd_ms=self.net.delay_sd_ms * scale
        )


class FastExcitationBackend(ScaledDelaysBackend):
    name = "nest-fast-excitation"
    EXCITATORY_SOURCES, FACTOR = True, 0.5


class SlowInhibitionBackend(ScaledDelaysBackend):
    name = "nest-slow-inhibition"
    EXCITATORY_SOURCES, FACTOR = False, 1.5


FAST_EXCITATION = Simulator(environment="nest", builders={"pd14": f"{__name__}:FastExcitationBackend"})
SLOW_INHIBITION = Simulator(environment="nest", builders={"pd14": f"{__name__}:SlowInhibitionBackend"})
# The value of snnbench.network.simulators.EXTRA_VARIABLE that registers both as simulators.
REGISTRY = ",".join(
    f"{backend.name}={__name__}:{simulator}"
    for backend, simulator in ((FastExcitationBackend, "FAST_EXCITATION"), (SlowInhibitionBackend, "SLOW_INHIBITION"))
)
