"""Activity statistics of a run, per population: what its record holds (the verdict whether the activity is
plausible is made at collect: snnbench.network.judging.plausibility)."""

from __future__ import annotations

import numpy as np

# The activity check's synchrony measure: the mean pairwise Pearson correlation of spike counts in
# CORRELATION_BIN_MS bins over the first CORRELATION_NEURONS neurons of a population that fired in
# the measured window (the validation statistics compute their own distribution, from the config).
CORRELATION_NEURONS = 200
CORRELATION_BIN_MS = 2.0
# points.csv's column of each population's statistic (validation.STATISTICS' names) and the record's field.
TABLE_COLUMNS = {
    "rate": ("rate_{}_hz", "rate_hz"),
    "cv_isi": ("cv_isi_{}", "cv_isi"),
    "correlation": ("correlation_{}", "correlation"),
}


def table_columns(populations: list[dict]) -> dict:
    """A record's `populations` as points.csv's columns (TABLE_COLUMNS): rate_L23E_hz, cv_isi_L23E, ..."""
    return {
        column.format(pop["population"]): pop.get(field)
        for pop in populations
        for column, field in TABLE_COLUMNS.values()
    }


def mean_correlation(senders: np.ndarray, times_ms: np.ndarray, neurons: np.ndarray) -> float | None:
    """Mean pairwise spike-count correlation of `neurons` (ids that fired); None below two."""
    if neurons.size < 2:
        return None
    start = times_ms.min()
    bins = int((times_ms.max() - start) // CORRELATION_BIN_MS) + 1
    if bins < 2:
        return None
    keep = np.isin(senders, neurons)
    row = np.searchsorted(neurons, senders[keep])
    column = ((times_ms[keep] - start) // CORRELATION_BIN_MS).astype(int)
    counts = np.bincount(row * bins + column, minlength=neurons.size * bins).reshape(neurons.size, bins)
    matrix = np.corrcoef(counts)
    pairs = matrix[np.triu_indices(neurons.size, 1)]
    pairs = pairs[np.isfinite(pairs)]
    return float(pairs.mean()) if pairs.size else None


def population_stats(
    senders: np.ndarray,
    times_ms: np.ndarray,
    first_ids: list[int],
    sizes: list[int],
    duration_ms: float,
    populations: tuple[str, ...],
) -> list[dict]:
    """Per population (named in order by `populations`): spike count, mean rate (spikes/s), the
    mean ISI coefficient of variation over neurons with at least three spikes (and how many such
    neurons there are), and the mean spike-count correlation (`mean_correlation`).

    Plain numpy (no pandas): this runs in every execute job, where an import costs overhead.
    """
    senders = np.asarray(senders, dtype=np.int64)
    times_ms = np.asarray(times_ms, dtype=float)
    first = np.asarray(first_ids)
    order = np.lexsort((times_ms, senders))
    senders, times_ms = senders[order], times_ms[order]
    population = np.searchsorted(first, senders, side="right") - 1

    # ISIs within each neuron's train: consecutive spikes of the same sender.
    same = senders[1:] == senders[:-1]
    isi, isi_sender = np.diff(times_ms)[same], senders[1:][same]
    neurons, index = np.unique(isi_sender, return_inverse=True)
    n_isi = np.bincount(index)
    mean = np.bincount(index, weights=isi) / np.maximum(n_isi, 1)
    var = np.bincount(index, weights=isi**2) / np.maximum(n_isi, 1) - mean**2
    enough = n_isi >= 2
    cv = np.sqrt(np.maximum(var[enough], 0.0)) / mean[enough]
    cv_population = np.searchsorted(first, neurons[enough], side="right") - 1

    counts = np.bincount(population, minlength=len(first))
    fired = np.unique(senders)
    fired_population = np.searchsorted(first, fired, side="right") - 1
    stats = []
    for i, name in enumerate(populations[: len(first)]):
        cvs = cv[cv_population == i]
        sample = fired[fired_population == i][:CORRELATION_NEURONS]
        stats.append(
            {
                "population": name,
                "neurons": int(sizes[i]),
                "spikes": int(counts[i]),
                "rate_hz": float(counts[i] / (sizes[i] * duration_ms * 1e-3)) if sizes[i] else float("nan"),
                "cv_isi": float(cvs.mean()) if cvs.size else None,
                "cv_neurons": int(cvs.size),
                "correlation": mean_correlation(senders, times_ms, sample),
            }
        )
    return stats
