"""Delay binning: Brian2GeNN has one delay per Synapses object, so each projection is split into a
few Synapses objects of contiguous delays; other devices can use the same binned delays as data,
to measure what binning changes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_DELAY_BINS = 4


@dataclass
class DelayBin:
    """Synapses of one projection that share one delay (Brian2GeNN: one Synapses object)."""

    index: np.ndarray  # positions of the synapses within the projection
    low_steps: int  # the bin holds delays low_steps .. high_steps (inclusive)
    high_steps: int
    delay_steps: int  # the delay all of them get


def delay_bins(delay_steps: np.ndarray, n_bins: int) -> list[DelayBin]:
    """Split synapses by delay into at most n_bins bins of contiguous delays (in time steps).

    Bin edges are quantiles of the delays, so bins hold similar numbers of synapses; a bin's
    delay is the mean delay of its synapses rounded to a step. With at least as many bins as
    distinct delays, every bin holds one delay value and the binning is exact.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    delay_steps = np.asarray(delay_steps)
    values, counts = np.unique(delay_steps, return_counts=True)
    if values.size == 0:
        return []
    if values.size <= n_bins:
        groups = [[k] for k in range(values.size)]
    else:
        # Cut the sorted distinct values where the cumulative count crosses each quantile.
        cumulative = np.cumsum(counts) / counts.sum()
        cuts = np.searchsorted(cumulative, np.arange(1, n_bins) / n_bins, side="left") + 1
        edges = np.unique(np.concatenate([[0], np.clip(cuts, 1, values.size - 1), [values.size]]))
        groups = [list(range(a, b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    order = np.argsort(delay_steps, kind="stable")
    sorted_steps = delay_steps[order]
    bins = []
    for group in groups:
        low, high = int(values[group[0]]), int(values[group[-1]])
        a, b = np.searchsorted(sorted_steps, [low, high + 1])
        index = np.sort(order[a:b])
        bins.append(DelayBin(index, low, high, int(np.rint(delay_steps[index].mean()))))
    return bins


def binned_delay_steps(delay_steps: np.ndarray, bins: list[DelayBin]) -> np.ndarray:
    """Each synapse's delay replaced by its bin's delay (binned delays as data, on any device)."""
    delays = np.empty_like(delay_steps)
    for b in bins:
        delays[b.index] = b.delay_steps
    return delays


def binning_summary(label: str, delay_steps: np.ndarray, bins: list[DelayBin]) -> dict:
    """What delay binning did to one projection, for the point's record."""
    error = sum(np.abs(delay_steps[b.index] - b.delay_steps).sum() for b in bins) / max(delay_steps.size, 1)
    return {
        "projection": label,
        "bins": [
            {"steps": [b.low_steps, b.high_steps], "delay_steps": b.delay_steps, "synapses": len(b.index)} for b in bins
        ],
        "mean_abs_error_steps": float(error),
    }
