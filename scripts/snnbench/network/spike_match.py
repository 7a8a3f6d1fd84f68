"""Spike-level agreement of two runs of one network (the `network_seed` key, deterministic DC input).

A reference spike (neuron n at time t) is matched when the other run has a spike of neuron n
within one time step of t. The refractory period (2 ms for PD14) is many steps, so a spike can
match at most one spike of the other run. Measured over the first `early_ms` of the measured
window (before chaos amplifies a first difference) and over the whole window.
"""

from __future__ import annotations

import numpy as np

EARLY_MS = 100.0  # the first window after which a chaotic network may diverge


def keys(neurons: np.ndarray, times_ms: np.ndarray, dt_ms: float) -> np.ndarray:
    """One integer per spike: its neuron and its time step."""
    steps = np.rint(np.asarray(times_ms) / dt_ms).astype(np.int64)
    return np.asarray(neurons, dtype=np.int64) * (1 << 32) + steps


def matched(reference: tuple[np.ndarray, np.ndarray], other: tuple[np.ndarray, np.ndarray], dt_ms: float) -> np.ndarray:
    """For each reference spike (senders, times_ms): whether `other` has one of the same neuron within one step."""
    ref_keys, other_keys = keys(*reference, dt_ms), keys(*other, dt_ms)
    return np.isin(ref_keys, other_keys) | np.isin(ref_keys - 1, other_keys) | np.isin(ref_keys + 1, other_keys)


def match_fractions(
    reference: tuple[np.ndarray, np.ndarray],
    other: tuple[np.ndarray, np.ndarray],
    dt_ms: float,
    window_start_ms: float,
    early_ms: float = EARLY_MS,
) -> dict[str, float]:
    """Fraction of the reference's spikes the other run emits (first `early_ms` of the window, and
    all), and of the other's spikes the reference emits (spikes the other run adds)."""
    hits = matched(reference, other, dt_ms)
    early = np.asarray(reference[1]) <= window_start_ms + early_ms
    back = matched(other, reference, dt_ms)
    return {
        "spike_match_early": float(hits[early].mean()) if early.any() else float("nan"),
        "spike_match_run": float(hits.mean()) if hits.size else float("nan"),
        "spike_match_other_run": float(back.mean()) if back.size else float("nan"),
        "reference_spikes_early": int(early.sum()),
    }
