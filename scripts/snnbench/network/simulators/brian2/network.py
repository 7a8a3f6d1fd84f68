"""PD14's random data for Brian2, drawn with numpy from the point's seed the way the NEST backend
draws it: a fixed total number of synapses per projection with sources and targets drawn with
replacement, normal weights and delays redrawn (not clipped) until they have the right sign or
reach dt, and optimized initial potentials. Every device gets the same network for a seed."""

from __future__ import annotations

import numpy as np

from snnbench.network.models import pd14
from snnbench.network.models.pd14_exported import Projection


def redraw_normal(rng: np.random.Generator, mean: float, sd: float, n: int, low: float, high: float) -> np.ndarray:
    """n normal values; those outside [low, high] are drawn again until none is (not clipped)."""
    values = rng.normal(mean, sd, n)
    bad = (values < low) | (values > high)
    while bad.any():
        values[bad] = rng.normal(mean, sd, int(bad.sum()))
        bad = (values < low) | (values > high)
    return values


def draw_projections(net: pd14.Network, seed: int, dt_ms: float = pd14.DT_MS) -> list[Projection]:
    """All recurrent projections of PD14 for one seed: fixed total number, with replacement."""
    rng = np.random.default_rng(seed)
    projections = []
    for t in range(len(pd14.POPULATIONS)):
        for s in range(len(pd14.POPULATIONS)):
            n = int(net.num_synapses[t, s])
            if n == 0:
                continue
            i = rng.integers(0, net.num_neurons[s], n, dtype=np.int32)
            j = rng.integers(0, net.num_neurons[t], n, dtype=np.int32)
            mean_w, sd_w = net.weight_mean_pA[t, s], net.weight_sd_pA[t, s]
            low, high = (0.0, np.inf) if mean_w > 0 else (-np.inf, 0.0)
            weight = redraw_normal(rng, mean_w, sd_w, n, low, high)
            # NEST's bound: delays below dt - dt/2 are redrawn; the rest round to whole steps.
            delay = redraw_normal(rng, net.delay_mean_ms[t, s], net.delay_sd_ms[t, s], n, 0.5 * dt_ms, np.inf)
            steps = np.maximum(np.rint(delay / dt_ms), 1).astype(np.int32)
            projections.append(Projection(t, s, i, j, weight, steps))
    return projections


def initial_potentials(net: pd14.Network, seed: int) -> list[np.ndarray]:
    """Optimized initial membrane potentials (mV), normal per population."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own: independent of the connectivity
    return [rng.normal(pd14.V0_MEAN_MV[p], pd14.V0_SD_MV[p], n) for p, n in enumerate(net.num_neurons)]


def projection_label(projection: Projection) -> str:
    """The projection's name in Synapses names and the record, e.g. L23E_to_L4I."""
    return f"{pd14.POPULATIONS[projection.source]}_to_{pd14.POPULATIONS[projection.target]}"
