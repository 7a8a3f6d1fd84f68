"""A verdict per simulator: over all its runs, does it simulate the same model as the reference?

One run is judged against the reference's seeds by snnbench.network.validation; a change that moves every
run a little (fast synchrony off by two seed SDs, rates within 6 %) passes most runs one by one, yet its runs
as a group differ plainly from the reference's. This module asks the group question, once per experiment,
model size, simulator build and `perturbation`: all finished runs of the group, valid or not, against the
reference simulator's finished runs of the unchanged model.

The test is a permutation test of the largest feature-wise difference (the single-step max-T of Westfall &
Young 1993, Resampling-Based Multiple Testing; as in Nichols & Holmes 2002, Hum. Brain Mapp. 15:1): features
are every population's means of the statistics of validation.STATISTICS: rates and ISI CVs over every neuron
(the record's populations: cheap, and the validation's subsample cost them power), correlations over the
subsample (their cost grows with the square of the neurons); each difference of group means in Welch's t
form. Under the hypothesis tested the m + n runs are exchangeable, so relabelling them gives the statistic's
exact distribution: a simulator that runs the reference's model is said to differ with chance at most ALPHA,
whatever the features' distribution and correlation. A feature is named as differing where its own |t|
exceeds the permutation distribution's 1 - ALPHA quantile of the maximum (its familywise-adjusted p <= ALPHA).

With fewer distinct relabellings than 1 / ALPHA no outcome could reach ALPHA: the verdict is then "not
enough runs (m vs n)".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from snnbench.network import activity

ALPHA = 0.05  # chance that a simulator running the reference's model is said to differ
PERMUTATIONS = 4999  # random relabellings (all of them where there are fewer)
SEED = 0  # the relabellings' generator: the same tables give the same verdict
SAME_MODEL = ["neuron_scale", "indegree_scale", "input", "t_presim_ms", "t_sim_ms"]
AGREES, REFERENCE = "agrees", "reference"
COLUMNS = ("simulator_verdict", "simulator_verdict_p", "simulator_verdict_runs")
# Statistics taken over every neuron of a population (points.csv's activity columns, from the record) rather than
# the validation's subsample. Restricted to 200 neurons a +5 % drive's effect on L4I's rate fell from 15.6 to 2.6
# seed SDs (issue 52).
WHOLE_POPULATION = ("rate", "cv_isi")


def features(long: pd.DataFrame, points: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per point (index path), one column per `<statistic> <population>`: the point's sample means of the
    validation's subsample (long: its table), those of WHOLE_POPULATION over every neuron where `points` (with
    `path` and activity.TABLE_COLUMNS) has them."""
    if long.empty or "mean" not in long:
        return pd.DataFrame()
    wide = long.pivot_table(index="path", columns=["statistic", "population"], values="mean", aggfunc="first")
    wide.columns = [f"{statistic} {population}" for statistic, population in wide.columns]
    if points is None:
        return wide
    whole = points.drop_duplicates("path").set_index("path").reindex(wide.index)
    for statistic in WHOLE_POPULATION:
        column = activity.TABLE_COLUMNS[statistic][0]
        for population in long.loc[long["statistic"] == statistic, "population"].unique():
            if column.format(population) in whole:
                wide[f"{statistic} {population}"] = pd.to_numeric(whole[column.format(population)], errors="coerce")
    return wide


def _welch(z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """|Welch t| per labelling (rows of `labels`: True = the simulator's run) and feature (columns of z)."""
    m = labels.sum(axis=1, keepdims=True).astype(float)
    n = labels.shape[1] - m
    lab = labels.astype(float)
    sx, sxx = lab @ z, lab @ (z**2)
    sy, syy = (1 - lab) @ z, (1 - lab) @ (z**2)
    mx, my = sx / m, sy / n
    vx, vy = (sxx - m * mx**2) / (m - 1), (syy - n * my**2) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(mx - my) / np.sqrt(np.maximum(vx, 0) / m + np.maximum(vy, 0) / n)
    return np.where(np.isnan(t), 0.0, t)  # 0 / 0: equal constant groups, no difference


def _labellings(m: int, n: int, rng) -> tuple[np.ndarray, bool]:
    """The observed labelling first, then PERMUTATIONS random ones or, where there are fewer, every one (the
    observed among them: the second value says so)."""
    from itertools import combinations

    total = m + n
    observed = np.zeros((1, total), dtype=bool)
    observed[0, :m] = True
    if math.comb(total, m) <= PERMUTATIONS:
        every = np.zeros((math.comb(total, m), total), dtype=bool)
        for i, chosen in enumerate(combinations(range(total), m)):
            every[i, list(chosen)] = True
        return np.vstack([observed, every]), True
    drawn = np.argsort(rng.random((PERMUTATIONS, total)), axis=1)[:, :m]
    random = np.zeros((PERMUTATIONS, total), dtype=bool)
    np.put_along_axis(random, drawn, True, axis=1)
    return np.vstack([observed, random]), False


def group_test(runs: pd.DataFrame, reference: pd.DataFrame, alpha: float = ALPHA) -> dict:
    """The verdict of one group's runs (rows: runs, columns: features) against the reference's runs:
    {verdict, p, differs: [features], runs: "m vs n"}."""
    shared = [c for c in runs.columns if c in reference.columns]
    runs, reference = runs[shared], reference[shared]
    both = pd.concat([runs, reference]).dropna(axis=1)
    both = both.loc[:, both.std() > 0]  # a feature equal in every run says nothing
    m, n = len(runs), len(reference)
    counted = f"{m} vs {n}"
    if m < 2 or n < 2 or math.comb(m + n, m) < 1 / alpha or both.empty:
        return {"verdict": f"not enough runs ({counted})", "p": math.nan, "differs": [], "runs": counted}
    z = both.to_numpy(dtype=float)
    z = (z - z.mean(axis=0)) / z.std(axis=0)  # scale-free: Welch's t is, and sums stay well conditioned
    labellings, exact = _labellings(m, n, np.random.default_rng(SEED))
    t = _welch(z, labellings)
    largest, others = t[0].max(), t[1:].max(axis=1)
    at_least = int(np.sum(others >= largest * (1 - 1e-9)))
    # Every labelling: the observed one is among them; drawn ones: it is added (Phipson & Smyth 2010).
    p = at_least / len(others) if exact else (at_least + 1) / (len(others) + 1)
    critical = np.quantile(others, 1 - alpha)
    differs = [name for name, value in zip(both.columns, t[0], strict=True) if value > critical]
    verdict = AGREES if p > alpha else "differs (" + describe(differs) + ")"
    return {"verdict": verdict, "p": p, "differs": differs, "runs": counted}


def describe(differing: list[str]) -> str:
    """`rate: L4I, L5E; correlation: L23E` from feature names."""
    by_statistic: dict[str, list[str]] = {}
    for name in differing:
        statistic, population = name.split(" ", 1)
        by_statistic.setdefault(statistic, []).append(population)
    return "; ".join(f"{s}: {', '.join(p)}" for s, p in by_statistic.items()) or "no single feature"


def add_verdicts(points: pd.DataFrame, long: pd.DataFrame, reference: str) -> pd.DataFrame:
    """COLUMNS on one experiment's points: each finished point's group verdict against `reference`'s
    finished runs of the same model size (the reference's own points: "reference")."""
    points = points.assign(**{c: None for c in COLUMNS})
    wide = features(long, points)
    ok = points[(points["status"] == "ok") & points["path"].isin(wide.index)]
    if ok.empty:
        return points
    unchanged = ok["perturbation"].fillna("") == "" if "perturbation" in ok else pd.Series(True, index=ok.index)
    is_reference = (ok["simulator_build"] == reference) | (ok["simulator"] == reference)
    points.loc[is_reference[is_reference].index, "simulator_verdict"] = REFERENCE
    group = ["simulator_build", *(["perturbation"] if "perturbation" in ok else []), *SAME_MODEL]
    for key, runs in ok[~is_reference | ~unchanged].groupby(group, dropna=False):
        size = dict(zip(group, key, strict=True))
        same = np.logical_and.reduce([ok[k].astype(str) == str(size[k]) for k in SAME_MODEL])
        ref = ok[is_reference & unchanged & same]
        found = group_test(wide.loc[runs["path"]], wide.loc[ref["path"]])
        points.loc[runs.index, list(COLUMNS)] = [found["verdict"], found["p"], found["runs"]]
    return points


def table(points: pd.DataFrame) -> pd.DataFrame:
    """One row per experiment, simulator build and perturbation: the verdict (what the simulators figure and
    `python -m snnbench.network.judging.group_verdict` show)."""
    if "simulator_verdict" not in points:
        return pd.DataFrame()
    judged = points[points["simulator_verdict"].notna() & (points["simulator_verdict"] != REFERENCE)]
    keys = ["experiment", "simulator_build", *(["perturbation"] if "perturbation" in points else []), *SAME_MODEL]
    return judged.groupby(keys, dropna=False)[list(COLUMNS)].first().reset_index()


def main(argv: list[str] | None = None) -> int:
    """`python -m snnbench.network.judging.group_verdict results/<experiment>/points.csv`: the verdicts per
    simulator."""
    import sys

    paths = (argv if argv is not None else sys.argv[1:]) or ["results/points.csv"]
    found = table(pd.concat([pd.read_csv(p, low_memory=False) for p in paths]))
    print("no simulator verdicts (no other simulator than the reference)" if found.empty else found.to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
