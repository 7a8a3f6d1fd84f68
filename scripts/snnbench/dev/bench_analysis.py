"""Benchmark of collect + analyze on many synthetic records (goal: 10 000 records in <= 10 s).

    make bench-analysis                        # 10 000 records
    .venv/bin/python -m snnbench.dev.bench_analysis [--records N] [--keep DIR]

Writes one synthetic experiment in the real formats (records, validation results, Snakemake
benchmark files, and spike statistics for the points the validation figure shows) into a
temporary folder (not timed), then times, as the workflow's collect and analyze steps do them:

- collect: records + benchmarks + validation results -> points.csv, ranks.csv, validation.csv;
- analyze: every figure of the default config (figures.experiment), PNG and PDF, each from
  points.csv in a fresh Python process of its own (imports included) and `--jobs` at a time, as
  Snakemake runs the plot_figure jobs (profiles/local: cores: all; default: this machine's cores).

Prints the wall time of each step and of both together, PASS or MISS against the goal, and the
process's CPU time (on a shared machine wall time can be far above it). A single run is noisy:
repeat with --reps (the summary is the median).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from snnbench import planning
from snnbench.dev import synthetic
from snnbench.network import references
from snnbench.tables import collect, frames

GOAL_S = 10.0


def grid(records: int) -> dict:
    """An experiment of about `records` points: 2 simulators x 50 shapes x seeds."""
    exp = synthetic.experiment(name="bench", simulators=("nest", "brian2-cpp"), threads=(1, 2, 4, 8, 16))
    exp["resources"].update(nodes=[1, 2, 4, 8, 16], ranks_per_node=[1, 2])
    exp["seeds"] = list(range(1, max(1, records // 100) + 1))
    return exp


def defaults() -> dict:
    """The default config as the workflow plans it (checked, the schema's defaults filled in)."""
    return planning.plan_files([]).config


def draw_figure(name: str, panels: list[str], points_csv: Path, stats: list[Path], out: Path) -> float:
    """One plot_figure job in a fresh process: import, read the table, draw, save PNG and PDF;
    returns the process's CPU time (imports included)."""
    from snnbench import figures

    points = frames.read_points(points_csv)
    data = figures.PanelData(points)
    if figures.needs_distributions(panels):
        data.distributions = figures.load_distributions(stats, points)
    figures.draw(panels, data, out / f"{name}.png", out / f"{name}.pdf", title="bench")
    return time.process_time()


def run(records: int, workdir: Path, reps: int, jobs: int) -> dict:
    config = defaults()
    exp = grid(records)
    specs = planning.expand_points(exp)
    shown = set(references.figure_points(specs))
    start = time.perf_counter()
    paths = synthetic.write_experiment(workdir, exp, with_stats=shown, distinct_validations=50)
    print(f"wrote {len(specs)} synthetic records in {time.perf_counter() - start:.1f} s (not timed)")
    tolerance = {k: config["validation"][k] for k in ("alpha", "ks_alpha", "ks_margin")}
    out = workdir / "results" / "bench"
    times = {"collect": [], "analyze": [], "cpu": []}
    for _ in range(reps):
        cpu = time.process_time()
        start = time.perf_counter()
        points, ranks, long = collect.collect_tables(
            paths["records"], config["activity_check"], paths["benchmarks"], paths["validations"], tolerance
        )
        for name, frame in (("points", points), ("ranks", ranks), ("validation", long)):  # as collect_tables.py
            frames.write_table(frame, out / f"{name}.csv")
        times["collect"].append(time.perf_counter() - start)

        start = time.perf_counter()
        (out / "figures").mkdir(exist_ok=True)
        stats = [workdir / path / "stats.npz" for path in references.figure_points(specs)]
        todo = config["figures"]["experiment"].items()
        # A fresh interpreter per figure ("spawn", one task per process): a forked worker would
        # inherit this process's imports, which every plot_figure job pays.
        fresh = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=fresh, max_tasks_per_child=1) as pool:
            futures = [pool.submit(draw_figure, n, p, out / "points.csv", stats, out / "figures") for n, p in todo]
            figure_cpu = sum(f.result() for f in futures)
        times["analyze"].append(time.perf_counter() - start)
        times["cpu"].append(time.process_time() - cpu + figure_cpu)
    return {"points": len(points), "invalid": int((~points["valid"]).sum()), **times}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.dev.bench_analysis", description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000, help="synthetic records (default 10 000)")
    parser.add_argument("--reps", type=int, default=1, help="repetitions of collect + analyze (default 1)")
    parser.add_argument("--keep", help="write into this folder and keep it (default: a temporary folder)")
    parser.add_argument(
        "--jobs", type=int, default=os.cpu_count(), help="figures drawn at a time (default: this machine's cores)"
    )
    args = parser.parse_args(argv)
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="snnbench-bench-"))
    (workdir / "results" / "bench").mkdir(parents=True, exist_ok=True)
    try:
        result = run(args.records, workdir, args.reps, args.jobs)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    collect, analyze = statistics.median(result["collect"]), statistics.median(result["analyze"])
    total = collect + analyze
    print(f"points: {result['points']} ({result['invalid']} invalid)")
    figures_n = len(defaults()["figures"]["experiment"])
    print(f"collect: {collect:.2f} s   analyze ({figures_n} figures, {args.jobs} at a time): {analyze:.2f} s")
    verdict = "PASS" if total <= GOAL_S else "MISS"
    print(f"collect + analyze: {total:.2f} s wall (median of {args.reps}; goal <= {GOAL_S:g} s) {verdict}")
    cpu = statistics.median(result["cpu"])
    print(f"CPU time (collect, and all figure jobs): {cpu:.2f} s; wall far above CPU / jobs means a shared machine")
    if args.keep:
        print(f"figures in {workdir / 'results/bench/figures'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
