"""Spike-level agreement of two runs of one network (the `network_seed` key, deterministic DC input).

Spikes are paired one to one: a spike of the reference (neuron n at step s) pairs with at most one
spike of the other run, of neuron n within TOLERANCE_STEPS of s, and that spike with no other. The
pairing is a maximum one (the most pairs any one-to-one pairing finds), so a run that emits every
spike twice pairs half of its spikes, and one spike between two of the reference's pairs one of them.
The share paired is measured both ways (the reference's spikes the other run emits, the other run's
spikes the reference emits), over the first `early_ms` of the measured window (before chaos amplifies
a first difference) and over the whole window.
"""

from __future__ import annotations

import numpy as np

EARLY_MS = 100.0  # the first window after which a chaotic network may diverge
TOLERANCE_STEPS = 1  # a spike one step early or late still pairs (simulators stamp a step's start or end)
NEURON_STRIDE = 1 << 32  # keys of two neurons lie this far apart: never within the tolerance


def keys(neurons: np.ndarray, times_ms: np.ndarray, dt_ms: float) -> np.ndarray:
    """One integer per spike: its neuron and its time step."""
    steps = np.rint(np.asarray(times_ms) / dt_ms).astype(np.int64)
    return np.asarray(neurons, dtype=np.int64) * NEURON_STRIDE + steps


def pair(
    reference: tuple[np.ndarray, np.ndarray],
    other: tuple[np.ndarray, np.ndarray],
    dt_ms: float,
    tolerance_steps: int = TOLERANCE_STEPS,
) -> tuple[np.ndarray, np.ndarray]:
    """Whether each reference spike (senders, times_ms) is paired, and whether each of `other`'s is,
    in a maximum one-to-one pairing of spikes of one neuron at most `tolerance_steps` apart."""
    ref_keys, other_keys = keys(*reference, dt_ms), keys(*other, dt_ms)
    merged = np.concatenate([ref_keys, other_keys])
    is_other = np.concatenate([np.zeros(ref_keys.size, bool), np.ones(other_keys.size, bool)])
    order = np.argsort(merged, kind="stable")
    merged, is_other = merged[order], is_other[order]
    # Groups: runs of the sorted keys with no gap wider than the tolerance. No pair spans two groups,
    # so each is paired alone; most hold one spike of each run, which pair.
    group = np.concatenate([[0], np.cumsum(np.diff(merged) > tolerance_steps)]) if merged.size else merged
    size = np.bincount(group)
    others = np.bincount(group, weights=is_other).astype(np.int64)
    paired = np.zeros(merged.size, bool)
    simple = (size == 2) & (others == 1)
    paired[simple[group]] = True
    crowded = ((size > 2) & (others > 0) & (others < size))[group]
    if crowded.any():
        paired[crowded] = _greedy(merged[crowded], is_other[crowded], tolerance_steps)
    in_input_order = np.empty_like(paired)
    in_input_order[order] = paired
    return in_input_order[: ref_keys.size], in_input_order[ref_keys.size :]


def _greedy(merged: np.ndarray, is_other: np.ndarray, tolerance_steps: int) -> np.ndarray:
    """Pairs sorted keys of two runs, the earliest unpaired of each side first: optimal for windows of
    one width on a line (a spike that cannot pair the other side's earliest can pair nothing later)."""
    ref_at, other_at = np.flatnonzero(~is_other), np.flatnonzero(is_other)
    ref, oth = merged[ref_at].tolist(), merged[other_at].tolist()
    paired = np.zeros(merged.size, bool)
    i = j = 0
    while i < len(ref) and j < len(oth):
        gap = oth[j] - ref[i]
        if gap < -tolerance_steps:
            j += 1
        elif gap > tolerance_steps:
            i += 1
        else:
            paired[ref_at[i]] = paired[other_at[j]] = True
            i += 1
            j += 1
    return paired


def _share(paired: np.ndarray, among: np.ndarray | None = None) -> float:
    chosen = paired if among is None else paired[among]
    return float(chosen.mean()) if chosen.size else float("nan")


def match_fractions(
    reference: tuple[np.ndarray, np.ndarray],
    other: tuple[np.ndarray, np.ndarray],
    dt_ms: float,
    window_start_ms: float,
    early_ms: float = EARLY_MS,
) -> dict[str, float]:
    """Share of the reference's spikes paired with the other run's (first `early_ms` of the window,
    and all), and of the other run's spikes paired with the reference's (spikes the other run adds)."""
    ref_paired, other_paired = pair(reference, other, dt_ms)
    ref_early = np.asarray(reference[1]) <= window_start_ms + early_ms
    other_early = np.asarray(other[1]) <= window_start_ms + early_ms
    return {
        "spike_match_early": _share(ref_paired, ref_early),
        "spike_match_run": _share(ref_paired),
        "spike_match_other_early": _share(other_paired, other_early),
        "spike_match_other_run": _share(other_paired),
        "reference_spikes_early": int(ref_early.sum()),
    }
