"""Steps in a history, found by a change-point fit (ruptures' PELT) weighed by the seeds' spread.

Along one series (one benchmark on one machine) the points are grouped by position: a simulator version (with
its build), or an snnbench commit (in the order of their dates) within one simulator version and build (so that a
new simulator version is not taken for a change of snnbench). Each position's value is the mean over its seeds;
the noise of such a mean is the seeds' standard deviation pooled over every position with two or more seeds,
divided by the square root of the seeds per position. PELT fits a piecewise-constant level to the positions' means
with a least-squares cost and a penalty per step of PENALTY x noise^2 x ln(positions) (a BIC-like penalty whose
factor is chosen so that, on flat series of 8 to 20 positions with 3 seeds each, at most 3 % report a step;
tests/unit/test_history_steps.py measures the rates). A step lies between two neighbouring positions; its size is
the ratio of the medians of the seeds after and before it, up to the next and from the previous step; steps of
less than MIN_CHANGE are not reported.

Runs, not only seeds: where the history knows its runs (the `run` column: one `history add` each), a run's
median varies from run to run by more than its seeds say (the load of the day, the node it got; measured here: run
medians of unchanged code 3.30, 3.92 and 4.95 s where seeds spread by 0.10-0.16). The noise of a position's mean is
then at least the run medians' own spread: their standard deviation estimated robustly from successive differences
along the axis (the median absolute difference / (0.6745 sqrt 2), as change-point methods estimate noise in the
presence of steps: Fryzlewicz 2014, Ann. Stat. 42:2243), over the square root of the runs per position. Points
judged `disturbed` (others used their CPUs: snnbench.machine.interference) are left out, and CPU-time metrics
(cpu_<phase>_s) sit beside wall-time ones: a neighbour's load moves wall time, hardly the work done.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import ruptures

PENALTY = 5.0
# Steps smaller than this (relative) are not reported: a metric almost without noise (peak memory) would otherwise
# show every change of a few kilobytes as a step. asv reports regressions above 5 % by default.
MIN_CHANGE = 0.02
# The axes a series is laid along: the column(s) that name a position, and how positions are ordered.
AXES = {"version": ["simulator_version", "build"], "commit": ["git_commit"]}


@dataclass(frozen=True)
class Step:
    metric: str
    axis: str
    within: str  # along commits: the simulator version and build the series was cut to ('' along versions)
    before: str  # the last position of the level before the step
    after: str  # the first position of the level after it
    ratio: float  # median after / median before
    noise: float  # the seeds' pooled standard deviation, relative to the median before


def version_order(label: str):
    """Sort key of simulator versions (with a build after a space): numeric parts as numbers (3.9 < 3.10), others
    as text, then the build."""
    version, _, build = str(label).partition(" ")
    parts = version.replace("-", ".").replace("+", ".").split(".")
    return [*((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts), (2, 0, build)]


def measured(points: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The valid points that have the metric, less those judged disturbed."""
    quiet = ~points["disturbed"].astype(object).eq(True) if "disturbed" in points else True  # unjudged: kept
    return points[points["valid"].astype(bool) & points[metric].notna() & quiet]


def position_labels(rows: pd.DataFrame, axis: str) -> pd.Series:
    """Each point's position on the axis: its version and build (`3.10.0 nest-3.10.0`) or its commit (10 digits)."""
    if rows.empty:
        return pd.Series("", index=rows.index, dtype=str)
    labels = rows[AXES[axis]].astype(str).agg(lambda parts: " ".join(p for p in parts if p), axis=1)
    return labels.str.slice(0, 10) if axis == "commit" else labels


def positions(points: pd.DataFrame, metric: str, axis: str) -> pd.DataFrame:
    """One row per position of a series (valid points with the metric): its label, seeds, mean, median,
    standard deviation, first date; in the axis' order."""
    rows = measured(points, metric)
    grouped = rows.assign(position=position_labels(rows, axis)).groupby("position", sort=False)
    table = grouped[metric].agg(seeds="size", mean="mean", median="median", sd="std")
    table["first_utc"] = grouped["started_utc"].min()
    if axis == "version":
        order = sorted(table.index, key=version_order)
    else:  # git's commit date where the records have it, else the first point's start
        dated = grouped["git_commit_utc"].min() if "git_commit_utc" in rows else pd.Series(dtype=object)
        table["order"] = dated.reindex(table.index).fillna(table["first_utc"]) if len(dated) else table["first_utc"]
        order = list(table.sort_values(["order", "first_utc"]).index)
    return table.loc[order]


def run_noise(points: pd.DataFrame, metric: str, axis: str, order: list[str]) -> float:
    """The noise of one position's mean from the spread between runs (nan where the history names fewer than
    three runs): a robust SD of successive run medians along the axis, over sqrt(runs per position)."""
    rows = measured(points, metric)
    if "run" not in rows or rows["run"].nunique() < 3:
        return float("nan")
    rows = rows.assign(position=pd.Categorical(position_labels(rows, axis), categories=order, ordered=True))
    runs = rows.groupby(["position", "run"], observed=True).agg(value=(metric, "median"), first=("started_utc", "min"))
    medians = runs.sort_values(["position", "first"])["value"].to_numpy()
    spread = float(np.median(np.abs(np.diff(medians)))) / (0.6745 * np.sqrt(2))
    return spread / np.sqrt(float(runs.groupby(level="position", observed=True).size().median()))


def pooled_sd(table: pd.DataFrame) -> float:
    """The seeds' standard deviation pooled over positions with two or more seeds (nan if none has)."""
    several = table[table["seeds"] >= 2]
    if several.empty:
        return float("nan")
    return float(np.sqrt(((several["seeds"] - 1) * several["sd"] ** 2).sum() / (several["seeds"] - 1).sum()))


def breakpoints(means: np.ndarray, noise_of_mean: float, penalty: float = PENALTY) -> list[int]:
    """Indices i where a new level starts at position i (PELT, least squares, penalty per step)."""
    if len(means) < 2 or not np.isfinite(noise_of_mean) or noise_of_mean <= 0:
        return []
    pen = penalty * noise_of_mean**2 * np.log(max(len(means), 3))
    found = ruptures.Pelt(model="l2", min_size=1, jump=1).fit(np.asarray(means, float).reshape(-1, 1)).predict(pen=pen)
    return found[:-1]


def find_steps(points: pd.DataFrame, metric: str, axis: str, within: str = "") -> list[Step]:
    """The steps of one metric along one series' axis (points: one series' rows of the history; along commits,
    those of one simulator version and build, named by `within`)."""
    table = positions(points, metric, axis)
    sd = pooled_sd(table)
    if table.empty or not np.isfinite(sd):
        return []
    seeds = float(table["seeds"].median())
    noise = np.nanmax([sd / np.sqrt(seeds), run_noise(points, metric, axis, list(table.index))])
    cuts = breakpoints(table["mean"].to_numpy(), noise)
    edges = [0, *cuts, len(table)]
    labels = list(table.index)
    rows = measured(points, metric)
    position = position_labels(rows, axis)
    steps = []
    for start, cut, end in zip(edges, edges[1:], edges[2:], strict=False):
        before = rows.loc[position.isin(labels[start:cut]), metric].median()
        after = rows.loc[position.isin(labels[cut:end]), metric].median()
        if abs(after / before - 1) >= MIN_CHANGE:
            steps.append(Step(metric, axis, within, labels[cut - 1], labels[cut], after / before, sd / before))
    return steps


def all_steps(history: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Every step of every series, metric and axis of a history: one row per step with the series' id."""
    rows = []
    for series, points in history.groupby("series", sort=False):
        for metric in metrics:
            if points[metric].notna().any():
                found = find_steps(points, metric, "version")
                versions = position_labels(points, "version")
                for within, same_build in points.groupby(versions, sort=False):
                    found += find_steps(same_build, metric, "commit", str(within))
                rows += [{"series": series, **vars(step)} for step in found]
    columns = ["series", "metric", "axis", "within", "before", "after", "ratio", "noise"]
    return pd.DataFrame(rows, columns=columns)
