"""What the NEST-based backends (nest, pynn-nest, nest-inm6) share of NEST's kernel, written once: its
build's account of itself, its timers, and the phases after the network is built (Prepare, the presimulation
and the measured Run)."""

from __future__ import annotations

import numpy as np

# What build_info names, and NEST before 3.9 keeps in SLI's statusdict (`threading` there).
STATUS_KEYS = {"have_mpi": "have_mpi", "threads_model": "threading", "built": "built", "prefix": "prefix"}
STATUS_KEYS |= {"hostos": "hostos", "hostcpu": "hostcpu", "mpiexec": "mpiexec"}


def build_info(nest) -> dict:
    """NEST's account of its build: the kernel's `build_info` (NEST 3.9 on), else its version and SLI's
    statusdict (the release trees before, built by the builds axis)."""
    try:
        return nest.GetKernelStatus("build_info")
    except KeyError:
        pass
    info = {"version": str(nest.__version__).removeprefix("NEST").strip().removeprefix("nest-")}
    for key, name in STATUS_KEYS.items():
        try:
            info[key] = nest.ll_api.sli_func(f"statusdict /{name} get")
        except Exception:  # noqa: BLE001 (a key this release's statusdict does not have: left out)
            continue
    return info


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
