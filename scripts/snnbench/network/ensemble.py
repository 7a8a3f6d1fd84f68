"""Tolerances from the reference simulator's own seeds: how far may a point be from its reference?

A point's reference is an ensemble of runs of the reference simulator at the same model, size, input and
durations, one per seed (snnbench.network.references). For each population and statistic
(snnbench.network.validation.STATISTICS: per-neuron rates, ISI CVs, pairwise correlations):

- judged: the point's sample mean against the members' sample means, on the log scale where all are positive
  (the seeds' means are right-skewed; their logs close to normal). It passes where the |difference| from the
  members' mean lies within the two-sided t prediction interval of one new run drawn as the members were:
  t(1 - a/2, n - 1) · sd · sqrt(1 + 1/n), n the members (the point left out where it is one of them),
  a = `alpha` / the point's number of comparisons (Bonferroni over populations x statistics), so that
  `alpha` is meant as the chance that a correct point is flagged anywhere. A sample mean over many neurons
  is close to normal, and the runs' means are exchangeable under the hypothesis tested: the interval's
  assumptions.
- reported, not judged: the point's mean two-sample Kolmogorov-Smirnov distance to the members, and each
  run's leave-one-out mean distance to the others (the point joining the ensemble where it is no member).
  Judged by a one-sided t limit the same way, KS distances flagged correct runs far more often than stated
  (measured: 4 of 8 NEST seeds of PD14 at N = 0.02, 4 of 20 at N = 0.05, at a stated 5 %): they are skewed,
  and the Bonferroni-corrected limit lies far in their tail, where a normal model fails.

Population rates agree (`rates_agree`) where each population's difference of seed means passes Student's
two-sample t-test: within t(1 - a/2, n + m - 2) · s_pooled · sqrt(1/n + 1/m), a = `alpha` / populations.

The error rates these rules reach are measured, not assumed: `make bench-validation`
(snnbench.dev.bench_validation). The t quantiles are scipy.stats'; the KS distances validation.distance's
(scipy.stats.ks_2samp on Elephant's statistics).
"""

from __future__ import annotations

import math

import numpy as np

MIN_MEMBERS = 3  # a prediction interval needs a spread: at least two distances besides the point's own


def pairwise(samples: list[np.ndarray], distance) -> np.ndarray:
    """Symmetric matrix of distance(a, b) between the ensemble's samples (NaN where undefined)."""
    n = len(samples)
    matrix = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            matrix[i, j] = matrix[j, i] = distance(samples[i], samples[j])
    return matrix


def leave_one_out(matrix: np.ndarray) -> np.ndarray:
    """Each member's mean distance to the other members (NaN-aware; NaN where it has none)."""
    n = len(matrix)
    if n < 2:
        return np.full(n, math.nan)
    off = matrix.astype(float).copy()
    np.fill_diagonal(off, np.nan)
    counts = np.sum(np.isfinite(off), axis=1)
    sums = np.nansum(off, axis=1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), math.nan)


def others(distances: list, self_index: int | None) -> list:
    """The members' leave-one-out distances without the point's own (where it is a member)."""
    return [d for i, d in enumerate(distances) if i != self_index]


def offset(row: dict, alpha_per_comparison: float) -> tuple[float, float, bool]:
    """(the point's |difference| from the members, the largest allowed, whether on the log scale) of a row
    (validate_point's, with `mean`, `ensemble_means` and `ensemble_self`), on the log scale where every mean
    is positive (see `offsets`); NaN where the ensemble has too few members for a spread."""
    rows = [row.get("mean")], [row.get("ensemble_means")], [row.get("ensemble_self")], [alpha_per_comparison]
    judged, limit, logged = offsets(*rows)
    return float(judged[0]), float(limit[0]), bool(logged[0])


def _scale(point, kept: list) -> tuple[float, list]:
    """log of the point's and the members' sample means where all are positive, else the means themselves:
    the seeds' means of rates, CVs and correlations are right-skewed (a network-wide synchrony of one seed
    raises every pair's correlation), the logs of them close to normal (measured: `make bench-validation`)."""
    if point is not None and math.isfinite(point) and point > 0 and all(v > 0 for v in kept):
        return math.log(point), [math.log(v) for v in kept]
    return (math.nan if point is None else float(point)), kept


def offsets(points, ensemble_means, self_indexes, alphas) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`offset` for many rows at once (collect judges thousands): the points' sample means, the rows'
    ensemble_means lists, their ensemble_self (None or NaN where the point is no member) and levels per
    comparison. The limit is the two-sided t prediction interval t(1 - a/2, n - 1) · sd · sqrt(1 + 1/n) of the
    n members' (log) means, the point left out where it is one of them."""
    from scipy import stats

    judged, n, sd, logged = [], [], [], []
    for point, values, self_index in zip(points, ensemble_means, self_indexes, strict=True):
        index = None if self_index is None or (isinstance(self_index, float) and math.isnan(self_index)) else self_index
        kept = [d for d in others(values if isinstance(values, list) else [], index) if _finite(d)]
        value, scaled = _scale(point, kept)
        logged.append(scaled is not kept)
        kept = scaled
        n.append(len(kept))
        judged.append(abs(value - float(np.mean(kept))) if kept else math.nan)
        spread = float(np.std(kept, ddof=1)) if len(kept) >= 2 else math.nan
        # Equal means summed in another order differ in their last bits: that is no spread either.
        sd.append(0.0 if spread <= 1e-9 * max(1.0, abs(float(np.mean(kept)))) else spread)
    n, sd = np.array(n, dtype=float), np.array(sd)
    enough = n >= MIN_MEMBERS - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        quantile = stats.t.ppf(1 - np.asarray(alphas, dtype=float) / 2, np.where(enough, n - 1, 1))
        limit = np.where(enough, quantile * sd * np.sqrt(1 + 1 / np.maximum(n, 1)), math.nan)
    # Members that agree exactly (a small population's rate is a count: two seeds can give the same one) give no
    # spread to judge by: the row falls back to the one-run rule instead of allowing nothing.
    limit = np.where(limit > 0, limit, math.nan)
    return np.array(judged, dtype=float), limit, np.array(logged, dtype=bool)


def _finite(value) -> bool:
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def rates_agree(reference: np.ndarray, other: np.ndarray, alpha: float = 0.05) -> dict[str, np.ndarray]:
    """The one rate-agreement rule: Student's two-sample t-test of the seed means per population. reference,
    other: rates (Hz), one row per seed and one column per population. Per population: |difference of the seed
    means|, the seeds' pooled sd s (both simulators' seed-to-seed variances, weighted by their degrees of
    freedom: under the hypothesis tested they run one model, so one variance), the tolerance
    t(1 - a/2, n + m - 2) · s · sqrt(1/n + 1/m) with a = alpha / populations, and whether the difference is
    within it (None-free: False where the reference has fewer than two seeds). Pooling matters with few seeds:
    with three, one simulator's spread alone can be near zero by chance (rates of small populations are
    counts: two seeds of NEST gave L6E exactly 1.007 spikes/s at N = 0.02)."""
    from scipy import stats

    reference, other = np.atleast_2d(reference).astype(float), np.atleast_2d(other).astype(float)
    n, m = reference.shape[0], other.shape[0]
    difference = np.abs(other.mean(axis=0) - reference.mean(axis=0))
    if n < 2 or m < 1:
        nan = np.full(difference.shape, math.nan)
        return {"difference": difference, "spread": nan, "tolerance": nan, "agrees": np.zeros_like(difference, bool)}
    squares = (n - 1) * reference.var(axis=0, ddof=1) + (m - 1) * (other.var(axis=0, ddof=1) if m > 1 else 0.0)
    spread = np.sqrt(squares / (n + m - 2))
    a = alpha / reference.shape[1]
    tolerance = stats.t.ppf(1 - a / 2, n + m - 2) * spread * math.sqrt(1 / n + 1 / m)
    return {"difference": difference, "spread": spread, "tolerance": tolerance, "agrees": difference <= tolerance}


def distances(
    sample: np.ndarray, members: list[np.ndarray], self_index: int | None, distance, member_matrix=None
) -> dict:
    """The ensemble fields of one population and statistic: the point's mean distance to the members
    (itself left out), their count, and each run's leave-one-out mean distance to the others. A point
    outside the ensemble joins it for this (its index last): then the point and every member are
    exchangeable runs under the hypothesis that the point is drawn as the members are, and their
    leave-one-out distances share one correlation structure, which the t prediction limit needs.
    distance(a, b) -> float (NaN where undefined); member_matrix: the members' pairwise distances where
    known (one ensemble judges many points)."""
    index = self_index if self_index is not None else len(members)
    if member_matrix is None:
        matrix = pairwise(list(members) if self_index is not None else [*members, sample], distance)
    elif self_index is not None:
        matrix = np.asarray(member_matrix, dtype=float)
    else:
        row = np.array([distance(sample, member) for member in members] + [0.0])
        matrix = np.block([[np.asarray(member_matrix, dtype=float), row[:-1, None]], [row[None, :]]])
    to_members = [d for i, d in enumerate(matrix[index]) if i != index and math.isfinite(d)]
    runs = list(members) if self_index is not None else [*members, sample]
    return {
        "ks_ensemble": float(np.mean(to_members)) if to_members else math.nan,
        "n_ensemble": len(to_members),
        "ensemble_ks": [float(d) for d in leave_one_out(matrix)],
        "ensemble_means": [float(np.mean(r)) if len(r) else math.nan for r in runs],
        "ensemble_self": index,
    }
