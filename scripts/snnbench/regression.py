"""Regression view: per-point ratios current / baseline of time per phase, real-time factor and
memory, with slowdowns beyond a tolerance flagged.

    python -m snnbench.regression BASELINE.csv [CURRENT.csv] [--tolerance 0.1] [--out ratios.csv]
    make regression BASELINE=path/to/points.csv

Points are matched on what defines them (experiment, simulator, resources, model size and
durations); each side is the median over its valid seeds, so the seeds need not agree. A
ratio above 1 + tolerance is a slowdown; the exit code is 1 when any point slowed down.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from snnbench.config import schema_default
from snnbench.simulators.base import PHASES
from snnbench.table import read_points, write_table

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


def _medians(points: pd.DataFrame) -> pd.DataFrame:
    valid = points[points["valid"].astype(bool)]
    metrics = [m for m in METRICS if m in valid]
    grouped = valid.groupby(KEYS)
    out = grouped[metrics].median()
    out["seeds"] = grouped.size()
    return out


def compare(baseline: pd.DataFrame, current: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """One row per point present (valid) in both tables: the ratio current / baseline of every
    metric both have, the worst ratio, and whether it is a slowdown beyond the tolerance."""
    base, cur = _medians(baseline), _medians(current)
    metrics = [m for m in METRICS if m in base and m in cur]
    joined = cur[metrics].join(base[metrics], how="inner", suffixes=("", "_baseline"))
    ratios = pd.DataFrame(index=joined.index)
    for m in metrics:
        ratios[f"ratio_{m}"] = joined[m] / joined[f"{m}_baseline"]
    ratios["seeds"] = cur.loc[ratios.index, "seeds"]
    ratios["seeds_baseline"] = base.loc[ratios.index, "seeds"]
    cols = [f"ratio_{m}" for m in metrics]
    ratios["worst"] = ratios[cols].idxmax(axis=1).str.removeprefix("ratio_")
    ratios["worst_ratio"] = ratios[cols].max(axis=1)
    ratios["slowdown"] = ratios["worst_ratio"] > 1.0 + tolerance
    return ratios.reset_index()


def render(ratios: pd.DataFrame, tolerance: float) -> str:
    if ratios.empty:
        return "no point is valid in both tables"
    shown = ratios.assign(
        shape=ratios["nodes"].astype(str)
        + "x"
        + ratios["ranks_per_node"].astype(str)
        + "x"
        + ratios["threads_per_rank"].astype(str),
        flag=ratios["slowdown"].map({True: "SLOWER", False: ""}),
    )
    cols = ["experiment", "simulator", "shape", "neuron_scale"]
    cols += [c for c in ratios if c.startswith("ratio_")] + ["flag"]
    renamed = {c: c.removeprefix("ratio_").removeprefix("time_").removesuffix("_s") for c in cols}
    text = shown[cols].rename(columns=renamed).to_string(index=False, float_format=lambda x: f"{x:.3f}")
    slow = int(ratios["slowdown"].sum())
    summary = f"\n{len(ratios)} points compared (current / baseline, medians over seeds); "
    summary += f"{slow} slower than {1 + tolerance:.2f}x" if slow else f"none slower than {1 + tolerance:.2f}x"
    return text + summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.regression", description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="baseline points.csv")
    parser.add_argument("current", nargs="?", default="results/points.csv", help="default results/points.csv")
    default = schema_default("regression", "tolerance")
    parser.add_argument("--tolerance", type=float, default=default, help=f"slowdown tolerance (default {default:g})")
    parser.add_argument("--out", help="also write the ratios as CSV")
    args = parser.parse_args(argv)
    ratios = compare(read_points(args.baseline), read_points(args.current), args.tolerance)
    print(render(ratios, args.tolerance))
    if args.out:
        write_table(ratios, args.out)
    return 1 if ratios["slowdown"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
