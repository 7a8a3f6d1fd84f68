"""Tolerances from the reference simulator's own seeds: how far may a point be from its reference?

A point's reference is an ensemble of runs of the reference simulator at the same model, size, input and
durations, one per seed (snnbench.network.references). For each population and statistic
(snnbench.network.validation.STATISTICS: per-neuron rates, ISI CVs, pairwise correlations):

- judged: the point's sample mean against the members' sample means, on the generalized-log scale
  asinh(x / c) (Durbin et al. 2002, Bioinformatics 18:S105; Huber et al. 2002, Bioinformatics 18:S96: a
  variance-stabilizing transform for values with multiplicative and additive noise): logarithmic for means
  well above c, linear near zero, c = GLOG_NOISE x the members' median standard error of their own sample
  mean (the additive, sampling part of a run's noise). The seeds' means of rates, CVs and strong correlations
  are right-skewed, a log close to normal; weak correlations (the multi-area model's, ~0.005 with a standard
  error ~0.002) lie near zero, where a log made 5 of 8 correct `nest` runs differ from INM-6's. Records
  validated before the members' standard errors were kept are judged on the log scale where all means are
  positive (the rule before). It passes where the |difference| from the
  members' mean lies within the two-sided t prediction interval of one new run drawn as the members were:
  t(1 - a/2, n - 1) · sd · sqrt(1 + 1/n), n the members (the point left out where it is one of them),
  a = `alpha` / the point's number of comparisons (Bonferroni over populations x statistics), so that
  `alpha` is meant as the chance that a correct point is flagged anywhere. A sample mean over many neurons
  is close to normal, and the runs' means are exchangeable under the hypothesis tested: the interval's
  assumptions.
- reported, not judged: the point's mean two-sample Kolmogorov-Smirnov distance to the members. Judged by
  a one-sided t limit the same way, KS distances flagged correct runs far more often than stated (measured:
  4 of 8 NEST seeds of PD14 at N = 0.02, 4 of 20 at N = 0.05, at a stated 5 %): they are skewed, and the
  Bonferroni-corrected limit lies far in their tail, where a normal model fails.

Population rates agree (`rates_agree`) where each population's difference of seed means passes Student's
two-sample t-test: within t(1 - a/2, n + m - 2) · s_pooled · sqrt(1/n + 1/m), a = `alpha` / populations.

The error rates these rules reach are measured, not assumed: `make bench-validation`
(snnbench.dev.bench_validation). The t quantiles are scipy.stats'; the KS distances
(validation.ks_statistic: scipy.stats.ks_2samp's statistic, on Elephant's statistics).
"""

from __future__ import annotations

import math

import numpy as np

# A spread to judge by needs at least this many reference runs besides the point (a member's own run left out);
# with fewer, a point is judged by the one-run rule (KS distance to its reference run: docs/figures.md).
MIN_MEMBERS = 3
# c of the generalized log, in the members' standard errors of their means: about the half-width of a 95 %
# interval of a run's own sampling noise. Chosen among 0.5, 1, 2 and 4 on PD14 (N = 0.05, 20 NEST seeds) and
# the multi-area model (N = K = 0.01, 8 + 8 seeds), checked on data not used to choose it: docs/figures.md.
GLOG_NOISE = 2.0


def others(distances: list, self_index: int | None) -> list:
    """The members' leave-one-out distances without the point's own (where it is a member)."""
    return [d for i, d in enumerate(distances) if i != self_index]


def offset(row: dict, alpha_per_comparison: float) -> tuple[float, float, str]:
    """(the point's |difference| from the members, the largest allowed, the scale: `glog`, `log` or `linear`)
    of a row (validate_point's, with `mean`, `ensemble_means`, `ensemble_sems` and `ensemble_self`; see
    `offsets`); NaN where the ensemble has too few members for a spread."""
    rows = [row.get("mean")], [row.get("ensemble_means")], [row.get("ensemble_self")], [alpha_per_comparison]
    judged, limit, scales = offsets(*rows, [row.get("ensemble_sems")])
    return float(judged[0]), float(limit[0]), str(scales[0])


def _scale(point, kept: list, noise: float) -> tuple[float, list, str]:
    """The point's and the members' sample means on the generalized-log scale asinh(x / noise) where the
    members' noise is known (see the module's docstring), else on the log scale where all are positive (records
    validated before), else as they are."""
    value = math.nan if point is None else float(point)
    if math.isfinite(noise) and noise > 0:
        return math.asinh(value / noise), [math.asinh(v / noise) for v in kept], "glog"
    if math.isfinite(value) and value > 0 and all(v > 0 for v in kept):
        return math.log(value), [math.log(v) for v in kept], "log"
    return value, kept, "linear"


def _member_index(self_index) -> int | None:
    """A row's ensemble_self as an index (None where the point is no member: None, or NaN read from a table)."""
    return None if self_index is None or (isinstance(self_index, float) and math.isnan(self_index)) else self_index


def _no_spread(sd, mean):
    """Equal means summed in another order differ in their last bits: that is no spread either."""
    return sd <= 1e-9 * np.maximum(1.0, np.abs(mean))


def _prediction_limit(sd, n, alpha):
    """Half-width of the two-sided t prediction interval of one new run from n: t(1 - a/2, n - 1) · sd · √(1 + 1/n)."""
    from scipy import stats

    return stats.t.ppf(1 - np.asarray(alpha, dtype=float) / 2, n - 1) * sd * np.sqrt(1 + 1 / n)


def _noise(sems, index) -> float:
    """GLOG_NOISE x the members' median standard error of their mean (NaN where unknown)."""
    kept = [d for d in others(sems if isinstance(sems, list) else [], index) if _finite(d)]
    return GLOG_NOISE * float(np.median(kept)) if kept else math.nan


def offsets(points, ensemble_means, self_indexes, alphas, ensemble_sems=None):
    """`offset` for many rows at once (collect judges thousands): the points' sample means, the rows'
    ensemble_means lists, their ensemble_self (None or NaN where the point is no member), levels per
    comparison and the ensemble_sems lists (None where a row has none). Returns the |differences|, the limits
    and the scales. The limit is the two-sided t prediction interval t(1 - a/2, n - 1) · sd · sqrt(1 + 1/n) of
    the n members' scaled means, the point left out where it is one of them."""
    ensemble_sems = [None] * len(points) if ensemble_sems is None else ensemble_sems
    judged, n, sd, scales = [], [], [], []
    for point, values, self_index, sems in zip(points, ensemble_means, self_indexes, ensemble_sems, strict=True):
        index = _member_index(self_index)
        kept = [d for d in others(values if isinstance(values, list) else [], index) if _finite(d)]
        value, kept, scale = _scale(point, kept, _noise(sems, index))
        scales.append(scale)
        n.append(len(kept))
        judged.append(abs(value - float(np.mean(kept))) if kept else math.nan)
        spread = float(np.std(kept, ddof=1)) if len(kept) >= 2 else math.nan
        sd.append(0.0 if _no_spread(spread, float(np.mean(kept)) if kept else math.nan) else spread)
    n, sd = np.array(n, dtype=float), np.array(sd)
    enough = n >= MIN_MEMBERS
    with np.errstate(divide="ignore", invalid="ignore"):
        limit = np.where(enough, _prediction_limit(sd, np.where(enough, n, 2.0), alphas), math.nan)
    # Members that agree exactly (a small population's rate is a count: two seeds can give the same one) give no
    # spread to judge by: the row falls back to the one-run rule instead of allowing nothing.
    limit = np.where(limit > 0, limit, math.nan)
    return np.array(judged, dtype=float), limit, np.array(scales, dtype=object)


def seed_excess(ensemble_means, self_indexes, alphas, ensemble_sems=None) -> float:
    """The reference seeds' own largest excess over a point's rows (`offsets`' rows of one point): each run
    other than the point (every member, and the point's own value left out) judged as the point is, against
    the other runs of the row (the point among them: all n + 1 runs are exchangeable when the point is drawn
    as the members are), |difference| / limit, the largest over runs and rows. NaN where no row has a spread.
    A point is flagged only where its own largest excess exceeds max(1, this): then, whatever the
    distribution of the runs' means, a correct point is flagged at most when it is the most extreme of the
    n + 1 runs, a chance of 1 / (n + 1) (a conformal bound: Vovk et al. 2005, Algorithmic Learning in a
    Random World), and the t rule's normal model holds it near `alpha` where the means are close to normal."""
    ensemble_sems = [None] * len(ensemble_means) if ensemble_sems is None else ensemble_sems
    largest = math.nan
    for values, self_index, alpha, sems in zip(ensemble_means, self_indexes, alphas, ensemble_sems, strict=True):
        if not isinstance(values, list):
            continue
        index = _member_index(self_index)
        runs = np.array([v if _finite(v) else math.nan for v in values], dtype=float)
        noise = _noise(sems, index)
        if math.isfinite(noise) and noise > 0:
            runs = np.arcsinh(runs / noise)
        elif np.all(runs[np.isfinite(runs)] > 0):
            runs = np.log(runs)
        kept = np.isfinite(runs)
        n = int(kept.sum()) - 1  # the other runs of each run
        if n < MIN_MEMBERS:
            continue
        total, squares = runs[kept].sum(), (runs[kept] ** 2).sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (total - runs) / n
            sd = np.sqrt(np.maximum((squares - runs**2 - n * mean**2) / (n - 1), 0.0))
            sd = np.where(_no_spread(sd, mean), math.nan, sd)
            excess = np.abs(runs - mean) / _prediction_limit(sd, n, alpha)
        if index is not None and 0 <= int(index) < excess.size:
            excess[int(index)] = math.nan
        if np.isfinite(excess).any():
            largest = float(np.nanmax([largest, np.nanmax(excess)]))
    return largest


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
