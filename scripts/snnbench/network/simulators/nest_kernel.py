"""What the NEST-based backends (nest, pynn-nest) read of NEST's kernel, written once."""

from __future__ import annotations

import numpy as np


def kernel_timers(nest) -> dict[str, float]:
    """NEST's own timers (time_*, seconds). Per-thread timers come as arrays: the slowest thread is
    what the rank waits for."""
    status = nest.GetKernelStatus()
    return {key: float(np.max(value)) for key, value in status.items() if key.startswith("time_")}
