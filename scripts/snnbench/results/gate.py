"""A regression gate: the current run against this machine's recent history, exit code 1 for a slowdown.

    python -m snnbench.results.gate [CURRENT.csv] [--history DIR] [--last N | --since DATE --until DATE | --version V]
        [--tolerance 0.1] [--tolerances FILE] [--metrics time_simulate_s ...] [--configfile FILE ...]
    make regression HISTORY=default|DIR [CURRENT=results/points.csv] [LAST=N] [SINCE=...] [UNTIL=...] [VERSION=...]
        [CONFIG=FILE]

Each current point is compared with the points of its series (the same benchmark on the same machine: its
name and its hardware digest, from the hardware record beside the point's record; snnbench.results.history.
SERIES_KEYS) in the history, its own records left out (a run already added is not its
own reference). The reference is chosen along the series: the last N runs (default 5), the points of a date
range, or those of one simulator version. The comparison is the regression view's (snnbench.results.regression):
medians over seeds, a slowdown is a ratio beyond the tolerance with every current seed slower than every
reference seed; tolerances per machine and metric as there. Exit codes: 0 no slowdown, 1 a slowdown, 2 no
(usable) history (none, or a table of it damaged), a bad argument or a refused config.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from snnbench.results import history, history_place, regression
from snnbench.schemas import schema_default
from snnbench.tables.frames import read_points, write_table

DEFAULT_LAST = 5


def reference(
    past: pd.DataFrame,
    current: pd.DataFrame,
    *,
    last: int | None = None,
    since: str | None = None,
    until: str | None = None,
    version: str | None = None,
) -> pd.DataFrame:
    """The history's points that the current points are compared with: of their machines and series, not
    their own records, then of one version, of a date range, or of each series' last `last` runs."""
    rows = past[past["series"].isin(set(current["series"])) & ~past["record_sha"].isin(set(current["record_sha"]))]
    if version:
        rows = rows[rows["simulator_version"] == version]
    dates = pd.to_datetime(rows["started_utc"], utc=True, errors="coerce")
    inside = pd.Series(True, index=rows.index)
    if since:
        inside &= dates >= pd.to_datetime(since, utc=True)
    if until:
        inside &= dates <= pd.to_datetime(until, utc=True)
    rows, dates = rows[inside], dates[inside]
    if last:
        latest = rows.assign(date=dates).groupby(["series", "run"])["date"].max().reset_index()
        latest["rank"] = latest.groupby("series")["date"].rank(method="first", ascending=False)
        kept = latest[latest["rank"] <= last]
        rows = rows.merge(kept[["series", "run"]], on=["series", "run"])
    return rows


def check(
    past: pd.DataFrame,
    current: pd.DataFrame,
    tolerance: float,
    tolerances: dict | None = None,
    metrics: list[str] | None = None,
    **selection,
) -> tuple[pd.DataFrame, int]:
    """The regression view's ratios of the current points against their reference in the history (of the metrics
    named, default all of the regression view's), with the experiment each current point belongs to; and how
    many current series have no reference."""
    base = reference(past, current, **selection)
    if metrics:
        unwatched = [m for m in regression.METRICS if m not in metrics]
        base, current = base.drop(columns=unwatched, errors="ignore"), current.drop(columns=unwatched, errors="ignore")
    ratios = regression.compare(base, current, tolerance, keys=history.SERIES_KEYS, tolerances=tolerances)
    experiments = current.drop_duplicates(history.SERIES_KEYS)[[*history.SERIES_KEYS, "experiment"]]
    ratios = ratios.merge(experiments, on=history.SERIES_KEYS, how="left")
    return ratios, len(set(current["series"]) - set(base["series"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.results.gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("current", nargs="?", default="results/points.csv", help="the current run's points.csv")
    history_place.place_arguments(parser)
    parser.add_argument("--last", type=int, help=f"compare with each series' last N runs (default {DEFAULT_LAST})")
    parser.add_argument("--since", help="compare with the points since this date (ISO, e.g. 2026-11-01)")
    parser.add_argument("--until", help="... and up to this date")
    parser.add_argument("--version", help="compare with the points of this simulator version")
    default = schema_default("regression", "tolerance")
    parser.add_argument("--tolerance", type=float, default=default, help=f"slowdown tolerance (default {default:g})")
    parser.add_argument("--tolerances", help="YAML file of tolerances per machine and metric ({machine: {metric: t}})")
    parser.add_argument("--metrics", nargs="+", choices=regression.METRICS, help="gate on these metrics only")
    parser.add_argument("--out", help="also write the ratios as CSV")
    args = parser.parse_args(argv)
    root = history_place.root_or_refusal(args)
    if root is None:
        return 2
    past, damaged = history.read_checked(root)
    for table in damaged:  # a verdict on part of the history could pass a slowdown: none
        print(table.line("no verdict on part of the history: make history-add sets it aside"), file=sys.stderr)
    if past.empty and not damaged:
        print(history.nothing_at(root), file=sys.stderr)
    if past.empty or damaged:
        return 2
    try:
        tolerances = regression.load_tolerances(args.tolerances) if args.tolerances else {}
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    current = current_points(read_points(args.current), Path(args.current))
    last = args.last or (None if args.since or args.until or args.version else DEFAULT_LAST)
    selection = {"last": last, "since": args.since, "until": args.until, "version": args.version}
    ratios, unreferenced = check(past, current, args.tolerance, tolerances, args.metrics, **selection)
    print(f"history {root}: {len(past)} points; reference: " + _selection(last, args.since, args.until, args.version))
    print(regression.render(ratios, args.tolerance))
    if unreferenced:
        print(f"{unreferenced} series of the current run have no reference in the history (not compared)")
    if args.out:
        write_table(ratios, args.out)
    return 1 if ratios["slowdown"].fillna(False).astype(bool).any() else 0


def current_points(points: pd.DataFrame, table: Path) -> pd.DataFrame:
    """The current run's points as the history keeps them: normalised, each with its record's digest and its
    hardware digest (as `history add` would give them, so that they find their series), '' where no record."""
    found = record_files(points, table)
    bodies = [path.read_bytes() if path else b"" for path in found]
    hardware = [history.hardware_of(path, body)[0] if path else "" for path, body in zip(found, bodies, strict=True)]
    frame = history.normalised(points).assign(hardware=pd.array(hardware, dtype="string"))
    shas = [history.digest(body) if path else "" for path, body in zip(found, bodies, strict=True)]
    return frame.assign(record_sha=shas, series=history.series_ids(frame))


def record_files(points: pd.DataFrame, table: Path) -> list[Path | None]:
    """Each current point's record (None where it is found neither beside the table nor from the working
    directory)."""
    bases = [*Path(table).resolve().parents[:3], Path.cwd()]  # beside the table first: its own records
    return [
        next((b / path / "record.json" for b in bases if (b / path / "record.json").is_file()), None)
        for path in points["path"].astype(str)
    ]


def _selection(last, since, until, version) -> str:
    parts = [f"simulator version {version}" if version else "", f"since {since}" if since else ""]
    parts += [f"until {until}" if until else "", f"each series' last {last} runs" if last else ""]
    return ", ".join(p for p in parts if p)


if __name__ == "__main__":
    sys.exit(main())
