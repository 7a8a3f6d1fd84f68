"""Regression view: per-point ratios current / baseline of time per phase, real-time factor and
memory, with changes beyond a tolerance and outside the spread over seeds flagged.

    python -m snnbench.results.regression BASELINE.csv [CURRENT.csv] [--tolerance 0.1] [--out ratios.csv]
    python -m snnbench.results.regression --builds BASELINE_BUILD CURRENT_BUILD [TABLE.csv] [--figure out.png]
    make regression BASELINE=path/to/points.csv
    make compare-builds BASELINE=nest-3.9 CURRENT=nest-3.10.0

Points are matched on what defines them (experiment, simulator, build, resources, model size and
durations); each side is the median over its valid seeds, so the seeds need not agree. With
--builds, both sides are builds of one table (one run): the same points in two builds. Each ratio
of medians comes with its spread over seeds (`_low` = fastest current / slowest baseline seed,
`_high` = slowest current / fastest baseline seed). A metric is slower when its ratio exceeds
1 + tolerance and its spread lies above 1 (every current seed slower than every baseline seed),
faster when below 1 - tolerance and its spread below 1. The exit code is 1 when any point slowed down.

References are kept per machine (ReFrame's system:partition, asv's machine): where both tables have
the `machine` column, a point is compared only with the baseline rows of the machine it ran on, with
that machine's tolerance per metric (--tolerances FILE: {machine: {metric: tolerance}}, as the
config's regression.tolerances); points of a machine the baseline has no rows of are listed as
"no reference for this machine", never flagged. Baselines of several machines concatenate
(BASELINE a.csv,b.csv).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

from snnbench.network.phases import PHASES
from snnbench.schemas import CONFIG_SCHEMA, config_problems, load_schema, schema_default
from snnbench.tables.frames import read_points, shapes, write_table

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
METRICS = [*(f"time_{p}_s" for p in (*PHASES, "total")), "cpu_simulate_s", "real_time_factor", "peak_rss_mb_sum"]
NO_REFERENCE = "no reference for this machine"


def read_tables(paths) -> pd.DataFrame:
    """One table of several (e.g. baselines of several machines): their rows concatenated."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    return pd.concat([read_points(p) for p in paths], ignore_index=True)


def load_tolerances(path) -> dict:
    """Tolerances per machine and metric from a YAML file shaped as the config's
    regression.tolerances; ValueError naming the file and the key for a bad one."""
    try:
        tolerances = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise ValueError(f"Error in {path}: {error}") from None
    schema = load_schema(CONFIG_SCHEMA)["properties"]["regression"]["properties"]["tolerances"]
    problems = config_problems(tolerances, schema)
    if problems:
        raise ValueError(f"Error in tolerances ({path}):\n  " + "\n  ".join(problems))
    return tolerances


def _summary(points: pd.DataFrame, keys: list[str]) -> dict[str, pd.DataFrame]:
    """Median, fastest and slowest valid seed of every metric, and the seeds, per point."""
    valid = points[points["valid"].astype(bool)]
    if "build" in keys:
        valid = valid.assign(build=valid["build"].astype("string").fillna(""))
    metrics = [m for m in METRICS if m in valid and valid[m].notna().any()]  # CPU times: not in older tables
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
    baseline: pd.DataFrame,
    current: pd.DataFrame,
    tolerance: float,
    keys: list[str] | None = None,
    tolerances: dict | None = None,
) -> pd.DataFrame:
    """One row per point present (valid) in both tables: the ratio current / baseline of every
    metric both have with its spread over seeds and its change, the worst ratio, and whether
    any metric is slower. keys: what matches points (default KEYS, and `build` and `machine` where
    both have them). tolerances: {machine: {metric: tolerance}} beside the default `tolerance`.
    With machines, a point of a machine the baseline lacks is a row with `reference` NO_REFERENCE."""
    keys = keys or [k for k in (*KEYS, "build", "machine") if k in baseline and k in current]
    base, cur = _summary(baseline, keys), _summary(current, keys)
    metrics = [m for m in METRICS if m in base["median"] and m in cur["median"]]
    index = cur["median"].index.intersection(base["median"].index)
    machines = index.get_level_values("machine") if "machine" in keys else [None] * len(index)
    ratios = pd.DataFrame(index=index)
    for m in metrics:
        ratios[f"ratio_{m}"] = cur["median"].loc[index, m] / base["median"].loc[index, m]
        ratios[f"ratio_{m}_low"] = cur["low"].loc[index, m] / base["high"].loc[index, m]
        ratios[f"ratio_{m}_high"] = cur["high"].loc[index, m] / base["low"].loc[index, m]
        ratios[f"change_{m}"] = [
            change(r, lo, hi, (tolerances or {}).get(machine, {}).get(m, tolerance))
            for (r, lo, hi), machine in zip(
                ratios[[f"ratio_{m}", f"ratio_{m}_low", f"ratio_{m}_high"]].itertuples(index=False),
                machines,
                strict=True,
            )
        ]
    ratios["seeds"] = cur["seeds"].loc[index]
    ratios["seeds_baseline"] = base["seeds"].loc[index]
    cols = [f"ratio_{m}" for m in metrics]
    ratios["worst"] = ratios[cols].idxmax(axis=1).str.removeprefix("ratio_")
    ratios["worst_ratio"] = ratios[cols].max(axis=1)
    ratios["slowdown"] = (ratios[[f"change_{m}" for m in metrics]] == "slower").any(axis=1)
    ratios = ratios.reset_index()
    if "machine" not in keys:
        return ratios
    return pd.concat([ratios.assign(reference=""), _unreferenced(base, cur)], ignore_index=True)


def _unreferenced(base: dict, cur: dict) -> pd.DataFrame:
    """The current points of machines the baseline has no rows of: listed, never flagged."""
    known = set(base["median"].index.get_level_values("machine"))
    index = cur["median"].index[~cur["median"].index.get_level_values("machine").isin(known)]
    rows = pd.DataFrame(index=index).reset_index()
    return rows.assign(seeds=cur["seeds"].loc[index].to_numpy(), slowdown=False, reference=NO_REFERENCE)


def compare_builds(
    points: pd.DataFrame, baseline: str, current: str, tolerance: float, tolerances: dict | None = None
) -> pd.DataFrame:
    """The same points of one table in two of its builds: current build / baseline build."""
    known = sorted(set(points["build"].dropna())) if "build" in points else []
    for build in (baseline, current):
        if build not in known:
            raise ValueError(f"no points of build {build!r} in the table; its builds: {', '.join(known) or 'none'}")
    keys = [*KEYS, "machine"] if "machine" in points else KEYS
    ratios = compare(
        points[points["build"] == baseline], points[points["build"] == current], tolerance, keys, tolerances
    )
    return ratios.assign(baseline_build=baseline, build=current)


def render(ratios: pd.DataFrame, tolerance: float) -> str:
    if ratios.empty:
        return "no point is valid in both tables"
    shown = ratios.assign(
        shape=shapes(ratios),
        flag=[_flags(row) for _, row in ratios.iterrows()],
    )
    named = [c for c in ("machine", "build") if c in ratios]
    cols = ["experiment", "simulator", *named, "shape", "neuron_scale"]
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
    unreferenced = int((ratios.get("reference", pd.Series(dtype=str)) == NO_REFERENCE).sum())
    if unreferenced:
        summary += f"; {unreferenced} of them with {NO_REFERENCE} (not compared)"
    return text + summary


def _flags(row: pd.Series) -> str:
    """SLOWER / FASTER and the metrics that changed, e.g. `SLOWER simulate,total`; or why a point
    has no comparison."""
    if row.get("reference") == NO_REFERENCE:
        return NO_REFERENCE
    changed = {"slower": [], "faster": []}
    for column, value in row.items():
        if str(column).startswith("change_") and value:
            changed[value].append(str(column).removeprefix("change_time_").removesuffix("_s").removeprefix("change_"))
    return " ".join(f"{kind.upper()} {','.join(names)}" for kind, names in changed.items() if names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.results.regression", description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline", help="baseline points.csv (with --builds: the baseline build)")
    parser.add_argument("current", nargs="?", help="points.csv (with --builds: the current build)")
    parser.add_argument("table", nargs="?", help="with --builds: the table of both builds (default results/points.csv)")
    parser.add_argument("--builds", action="store_true", help="compare two builds of one table")
    default = schema_default("regression", "tolerance")
    parser.add_argument("--tolerance", type=float, default=default, help=f"slowdown tolerance (default {default:g})")
    parser.add_argument("--tolerances", help="YAML file of tolerances per machine and metric ({machine: {metric: t}})")
    parser.add_argument("--out", help="also write the ratios as CSV")
    parser.add_argument("--figure", help="with --builds: also draw the ratios (PNG; a PDF beside it)")
    args = parser.parse_args(argv)
    try:
        tolerances = load_tolerances(args.tolerances) if args.tolerances else {}
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    if args.builds:
        if not args.current:
            parser.error("--builds needs two build names")
        ratios = compare_builds(
            read_points(args.table or "results/points.csv"), args.baseline, args.current, args.tolerance, tolerances
        )
    else:
        current = read_points(args.current or "results/points.csv")
        ratios = compare(read_tables(args.baseline.split(",")), current, args.tolerance, tolerances=tolerances)
    print(render(ratios, args.tolerance))
    if args.out:
        write_table(ratios, args.out)
    if args.figure:
        from snnbench.figures.build_ratios import draw_ratios

        draw_ratios(ratios, args.tolerance, args.figure, str(Path(args.figure).with_suffix(".pdf")))
    return 1 if ratios["slowdown"].any() else 0


if __name__ == "__main__":
    sys.exit(main())
