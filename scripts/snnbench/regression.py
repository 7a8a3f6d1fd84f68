"""Regression view: per-point ratios current / baseline of time per phase, real-time factor and
memory, with changes beyond a tolerance and outside the spread over seeds flagged.

    python -m snnbench.regression BASELINE.csv [CURRENT.csv] [--tolerance 0.1] [--out ratios.csv]
    python -m snnbench.regression --builds BASELINE_BUILD CURRENT_BUILD [TABLE.csv] [--figure out.png]
    make regression BASELINE=path/to/points.csv
    make compare-builds BASELINE=nest-3.9 CURRENT=nest-3.10.0

Points are matched on what defines them (experiment, simulator, build, resources, model size and
durations); each side is the median over its valid seeds, so the seeds need not agree. With
--builds, both sides are builds of one table (one run): the same points in two builds. Each ratio
of medians comes with its spread over seeds (`_low` = fastest current / slowest baseline seed,
`_high` = slowest current / fastest baseline seed). A metric is slower when its ratio exceeds
1 + tolerance and its spread lies above 1 (every current seed slower than every baseline seed),
faster when below 1 - tolerance and its spread below 1. The exit code is 1 when any point slowed down.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from snnbench.network.simulators.base import PHASES
from snnbench.schemas import schema_default
from snnbench.table import read_points, shapes, write_table

KEYS = [
    "experiment",
    "simulator",
    "nodes",
    "ranks_per_node",
    "threads_per_rank",
    "neuron_scale",
    "indegree_scale",
    "input",
    "t_sim_ms",
]
METRICS = [*(f"time_{p}_s" for p in (*PHASES, "total")), "real_time_factor", "peak_rss_mb_sum"]


def _summary(points: pd.DataFrame, keys: list[str]) -> dict[str, pd.DataFrame]:
    """Median, fastest and slowest valid seed of every metric, and the seeds, per point."""
    valid = points[points["valid"].astype(bool)]
    if "build" in keys:
        valid = valid.assign(build=valid["build"].astype("string").fillna(""))
    metrics = [m for m in METRICS if m in valid]
    grouped = valid.groupby(keys)[metrics]
    return {"median": grouped.median(), "low": grouped.min(), "high": grouped.max(), "seeds": grouped.size()}


def change(ratio, low, high, tolerance: float) -> str:
    """slower / faster / '' for one metric: beyond the tolerance and outside the spread over seeds."""
    if ratio > 1.0 + tolerance and low > 1.0:
        return "slower"
    if ratio < 1.0 - tolerance and high < 1.0:
        return "faster"
    return ""


def compare(
    baseline: pd.DataFrame, current: pd.DataFrame, tolerance: float, keys: list[str] | None = None
) -> pd.DataFrame:
    """One row per point present (valid) in both tables: the ratio current / baseline of every
    metric both have with its spread over seeds and its change, the worst ratio, and whether
    any metric is slower. keys: what matches points (default KEYS, and `build` where both have it)."""
    keys = keys or [k for k in (*KEYS, "build") if k in baseline and k in current]
    base, cur = _summary(baseline, keys), _summary(current, keys)
    metrics = [m for m in METRICS if m in base["median"] and m in cur["median"]]
    index = cur["median"].index.intersection(base["median"].index)
    ratios = pd.DataFrame(index=index)
    for m in metrics:
        ratios[f"ratio_{m}"] = cur["median"].loc[index, m] / base["median"].loc[index, m]
        ratios[f"ratio_{m}_low"] = cur["low"].loc[index, m] / base["high"].loc[index, m]
        ratios[f"ratio_{m}_high"] = cur["high"].loc[index, m] / base["low"].loc[index, m]
        ratios[f"change_{m}"] = [
            change(r, lo, hi, tolerance)
            for r, lo, hi in ratios[[f"ratio_{m}", f"ratio_{m}_low", f"ratio_{m}_high"]].itertuples(index=False)
        ]
    ratios["seeds"] = cur["seeds"].loc[index]
    ratios["seeds_baseline"] = base["seeds"].loc[index]
    cols = [f"ratio_{m}" for m in metrics]
    ratios["worst"] = ratios[cols].idxmax(axis=1).str.removeprefix("ratio_")
    ratios["worst_ratio"] = ratios[cols].max(axis=1)
    ratios["slowdown"] = (ratios[[f"change_{m}" for m in metrics]] == "slower").any(axis=1)
    return ratios.reset_index()


def compare_builds(points: pd.DataFrame, baseline: str, current: str, tolerance: float) -> pd.DataFrame:
    """The same points of one table in two of its builds: current build / baseline build."""
    known = sorted(set(points["build"].dropna())) if "build" in points else []
    for build in (baseline, current):
        if build not in known:
            raise ValueError(f"no points of build {build!r} in the table; its builds: {', '.join(known) or 'none'}")
    ratios = compare(points[points["build"] == baseline], points[points["build"] == current], tolerance, KEYS)
    return ratios.assign(baseline_build=baseline, build=current)


def render(ratios: pd.DataFrame, tolerance: float) -> str:
    if ratios.empty:
        return "no point is valid in both tables"
    shown = ratios.assign(
        shape=shapes(ratios),
        flag=[_flags(row) for _, row in ratios.iterrows()],
    )
    cols = ["experiment", "simulator", *(["build"] if "build" in ratios else []), "shape", "neuron_scale"]
    cols += [c for c in ratios if c.startswith("ratio_") and not c.endswith(("_low", "_high"))] + ["flag"]
    renamed = {c: c.removeprefix("ratio_").removeprefix("time_").removesuffix("_s") for c in cols}
    text = shown[cols].rename(columns=renamed).to_string(index=False, float_format=lambda x: f"{x:.3f}")
    slow = int(ratios["slowdown"].sum())
    sides = (
        f"build {ratios['build'].iloc[0]} / {ratios['baseline_build'].iloc[0]}"
        if "baseline_build" in ratios
        else "current / baseline"
    )
    summary = f"\n{len(ratios)} points compared ({sides}, medians over seeds); "
    summary += f"{slow} slower than {1 + tolerance:.2f}x" if slow else f"none slower than {1 + tolerance:.2f}x"
    summary += " beyond the spread over seeds"
    return text + summary


def _flags(row: pd.Series) -> str:
    """SLOWER / FASTER and the metrics that changed, e.g. `SLOWER simulate,total`."""
    changed = {"slower": [], "faster": []}
    for column, value in row.items():
        if str(column).startswith("change_") and value:
            changed[value].append(str(column).removeprefix("change_time_").removesuffix("_s").removeprefix("change_"))
    return " ".join(f"{kind.upper()} {','.join(names)}" for kind, names in changed.items() if names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.regression", description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="baseline points.csv (with --builds: the baseline build)")
    parser.add_argument("current", nargs="?", help="points.csv (with --builds: the current build)")
    parser.add_argument("table", nargs="?", help="with --builds: the table of both builds (default results/points.csv)")
    parser.add_argument("--builds", action="store_true", help="compare two builds of one table")
    default = schema_default("regression", "tolerance")
    parser.add_argument("--tolerance", type=float, default=default, help=f"slowdown tolerance (default {default:g})")
    parser.add_argument("--out", help="also write the ratios as CSV")
    parser.add_argument("--figure", help="with --builds: also draw the ratios (PNG; a PDF beside it)")
    args = parser.parse_args(argv)
    if args.builds:
        if not args.current:
            parser.error("--builds needs two build names")
        ratios = compare_builds(
            read_points(args.table or "results/points.csv"), args.baseline, args.current, args.tolerance
        )
    else:
        ratios = compare(read_points(args.baseline), read_points(args.current or "results/points.csv"), args.tolerance)
    print(render(ratios, args.tolerance))
    if args.out:
        write_table(ratios, args.out)
    if args.figure:
        from snnbench.figures.builds import draw_ratios

        draw_ratios(ratios, args.tolerance, args.figure, str(Path(args.figure).with_suffix(".pdf")))
    return 1 if ratios["slowdown"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
