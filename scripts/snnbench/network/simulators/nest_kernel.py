"""What the NEST-based backends (nest, pynn-nest, nest-inm6) share of NEST's kernel, written once: its
timers, and the phases after the network is built (Prepare, the presimulation and the measured Run)."""

from __future__ import annotations

import numpy as np


def kernel_timers(nest) -> dict[str, float]:
    """NEST's own timers (time_*, seconds). Per-thread timers come as arrays: the slowest thread is
    what the rank waits for."""
    status = nest.GetKernelStatus()
    return {key: float(np.max(value)) for key, value in status.items() if key.startswith("time_")}


class NestRunPhases:
    """prepare, presimulate, simulate and timers of a backend that holds PyNEST as `self.nest` and its
    model parameters as `self.model`: NEST's Prepare once, then Run per phase (no re-preparation)."""

    def prepare(self) -> None:
        self.nest.Prepare()

    def presimulate(self) -> None:
        if self.model["t_presim_ms"] > 0:
            self.nest.Run(self.model["t_presim_ms"])

    def simulate(self) -> None:
        self.nest.Run(self.model["t_sim_ms"])
        self.nest.Cleanup()
        # Spikes this rank's neurons fired in the last Run (the measured window), devices not
        # counted: what a performance point, which records no spikes, processed.
        self.spike_counter = int(self.nest.GetKernelStatus("local_spike_counter"))

    def timers(self) -> dict[str, float]:
        return kernel_timers(self.nest)
