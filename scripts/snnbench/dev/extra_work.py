"""A slower simulate phase kept outside the package, for make bench-history-noise: NEST's PD14 whose simulate
phase, after NEST's own, does extra busy work worth $SNNBENCH_EXTRA_WORK (a fraction, default 0) of the CPU time
NEST's simulate took. Work, not sleep: a slower code costs CPU time too, and so does this. With the variable unset
it is NEST's PD14 unchanged, so unchanged and slowed runs are one series (one simulator's name). Registered as

    SNNBENCH_NETWORK_SIMULATORS="nest-extra-work=snnbench.dev.extra_work:SIMULATOR"
"""

from __future__ import annotations

import os
import time

from snnbench.network.simulators import Simulator
from snnbench.network.simulators.nest.pd14 import NestBackend

NAME = "nest-extra-work"
REGISTRY_ENTRY = f"{NAME}={__name__}:SIMULATOR"
VARIABLE = "SNNBENCH_EXTRA_WORK"
SIMULATOR = Simulator(environment="nest", builders={"pd14": f"{__name__}:ExtraWorkBackend"})


class ExtraWorkBackend(NestBackend):
    """NEST's PD14 whose simulate phase ends with busy work worth $SNNBENCH_EXTRA_WORK of its CPU time."""

    name = NAME

    def simulate(self) -> None:
        started = time.process_time()
        super().simulate()
        share = float(os.environ.get(VARIABLE) or 0)
        busy_cpu(share * (time.process_time() - started))


def busy_cpu(seconds: float) -> int:
    """Sum integers on this thread until the process has used `seconds` more CPU time; the sum (so that the work
    is not optimised away)."""
    end, total = time.process_time() + seconds, 0
    while time.process_time() < end:
        total += sum(range(2000))
    return total
