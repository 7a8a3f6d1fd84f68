"""A simulator kept outside the package, for the test of the regression gate (tests/e2e/test_history_run.py):
NEST's PD14 under the name `nest-sleepy`, registered by
SNNBENCH_NETWORK_SIMULATORS="nest-sleepy=sleepy_plugin:SIMULATOR".
Its simulate phase first sleeps $SNNBENCH_TEST_SLEEP_S seconds when the point's experiment is named in
$SNNBENCH_TEST_SLOW_EXPERIMENTS (comma-separated): a run made slower on purpose, by a known amount, in the phase
the gate watches. Nothing in snnbench names it.
"""

from __future__ import annotations

import os
import time

from snnbench.network.simulators import Simulator
from snnbench.network.simulators.nest.pd14 import NestBackend

SIMULATOR = Simulator(environment="nest", builders={"pd14": "sleepy_plugin:SleepyBackend"})


class SleepyBackend(NestBackend):
    """PD14 on NEST whose simulate phase sleeps first in the experiments named slow."""

    name = "nest-sleepy"

    def simulate(self) -> None:
        if self.spec["experiment"] in os.environ.get("SNNBENCH_TEST_SLOW_EXPERIMENTS", "").split(","):
            time.sleep(float(os.environ.get("SNNBENCH_TEST_SLEEP_S", "0")))
        super().simulate()
