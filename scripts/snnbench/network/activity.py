"""Activity statistics of a run and the verdict whether its activity is plausible.

Sanity before performance: a point whose network is silent, saturated or regular is not a
performance result. The verdict is recorded with the point and keeps it out of scaling curves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# The activity check's synchrony measure: the mean pairwise Pearson correlation of spike counts in
# CORRELATION_BIN_MS bins over the first CORRELATION_NEURONS neurons of a population that fired in
# the measured window (the validation statistics compute their own distribution, from the config).
CORRELATION_NEURONS = 200
CORRELATION_BIN_MS = 2.0


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


def at(bound, population: str) -> float:
    """A bound of one population: the value itself, or its entry where bounds are per population."""
    return bound[population] if isinstance(bound, dict) else bound


def rate_problems(stats: list[dict], bounds: dict, duration_s: float | None = None) -> list[str]:
    """Silent and too active populations. A floor is judged only where the population's expected spike count
    at it (over `duration_s`) reaches the bounds' `min_floor_spikes` (snnbench.network.activity_bounds)."""
    problems = []
    for row in stats:
        name, rate = row["population"], row["rate_hz"]
        floor, ceiling = at(bounds["min_rate_hz"], name), at(bounds["max_rate_hz"], name)
        countable = duration_s is None or floor * row["neurons"] * duration_s >= bounds.get("min_floor_spikes", 0)
        if rate < floor and countable:
            problems.append(f"{name} silent: {rate:.3g} spikes/s < {floor:.3g}")
        if rate > ceiling:
            problems.append(f"{name} too active: {rate:.3g} spikes/s > {ceiling:.3g}")
    return problems


def verdict(
    stats: list[dict],
    bounds: dict,
    reference: tuple[dict, str] | None,
    model_problems: Sequence[str] = (),
    duration_s: float | None = None,
) -> dict:
    """Plausibility (no silent or saturated population, irregular firing, and none of the model's
    own `model_problems`: NetworkModel.activity_problems) and the distance to published rates where
    they exist for this scale. `bounds`: the config's, or resolved by snnbench.network.activity_bounds
    (per population where they come from a reference ensemble; written into the verdict with their source)."""
    problems = rate_problems(stats, bounds, duration_s)
    for row in stats:
        name = row["population"]
        if row["cv_neurons"] >= bounds["min_neurons_for_cv"]:
            low, high = at(bounds["min_cv_isi"], name), at(bounds["max_cv_isi"], name)
            if not low <= row["cv_isi"] <= high:
                problems.append(f"{name} ISI CV {row['cv_isi']:.2f} outside [{low:.3g}, {high:.3g}]")
    problems += model_problems
    result = {
        "checked": True,
        "plausible": not problems,
        "problems": problems,
        "rates_hz": {row["population"]: round(row["rate_hz"], 6) for row in stats},
        "cv_isi": {row["population"]: row["cv_isi"] for row in stats},
        "correlation": {row["population"]: row.get("correlation") for row in stats},
        "spikes": {row["population"]: row["spikes"] for row in stats},
        "reference": None,
        "bounds": {"source": "default", "basis": "the config's activity_check", **bounds},
    }
    if reference is not None:
        ref_rates, source = reference
        rate = {row["population"]: row["rate_hz"] for row in stats}
        deviation = {p: abs(rate[p] - r) / r for p, r in ref_rates.items()}
        worst = max(deviation.values())
        result["reference"] = {
            "source": source,
            "rates_hz": ref_rates,
            "rel_deviation": {p: round(d, 6) for p, d in deviation.items()},
            "max_rel_deviation": round(worst, 6),
            "within_tolerance": bool(worst <= bounds["reference_max_rel_deviation"]),
        }
    return result


def unchecked(reason: str) -> dict:
    return {
        "checked": False,
        "plausible": None,
        "problems": [reason],
        "rates_hz": {},
        "cv_isi": {},
        "correlation": {},
        "spikes": {},
        "reference": None,
        "bounds": None,
    }
