"""Benchmark of the benchmark: what the workflow costs per point, and how our PD14 on NEST compares
with INM-6's reference implementation. Not a test: it measures and prints, and says PASS or MISS
against the goals below. Run from the repository root:

    make bench ARGS="--reps 3"
    .venv/bin/python -m snnbench.dev.bench [--reps N] [--scale S] [--threads T]

It measures, at one model size (neuron scale S, in-degree scale K), one thread count and `reps` seeds:

1a. Wrapper overhead: each seed's point run through `snnbench.network.execute.run_point`, as the workflow
    runs it. Overhead = the record's `wall_time_s` (child process start, imports, merging, activity
    check) minus its `phases_s.total` (the simulation phases timed inside the child). The column
    `call` is the wall time of the whole `run_point` call as seen from outside; it also covers what
    happens outside `wall_time_s` (provenance collection, writing spikes and the record).
1b. Snakemake overhead: the real workflow (`snakemake --profile profiles/local`) run on a throw-away
    copy of the repository with one experiment of `reps` seeds. Overhead per point = Snakemake's
    benchmark time of the point's job (`benchmarks/execute/.../seed<k>.tsv`, column `s`) minus the
    record's `phases_s.total`. The line below the table divides the wall time of the whole
    `snakemake` command (DAG, specs, collect tables, figures included) by the number of points.
    Goal (1a and 1b): median overhead <= 2 s and <= 5 % of the simulation phases.
    `--only snakemake --only slurm` (make bench-slurm) runs 1b with profiles/local and with
    profiles/slurm on a SLURM cluster, side by side: per-point job overhead and whole-run time
    per point (submission, scheduling and status polling included).
2.  Ours vs reference: `python -m snnbench.network.run` (bare, no wrapper) and `python -m snnbench.network.oracle`
    (the `microcircuit` package) in fresh processes, interleaved with alternating order (ours first
    in even pairs, reference first in odd ones), the same seed within a pair. Compared: the sum of
    all phases (`total`, interpreter start not included in either) and the simulate phase alone.
    Goal: ratio of medians ours / reference <= 1.05. Synapse counts of both must be equal.
3.  PyNN on NEST vs PyNEST (`--only pynn`, or `make bench-pynn`; not part of the default run):
    `python -m snnbench.network.run` for simulators `pynn-nest` and `nest`, bare, in fresh processes,
    interleaved pairs with alternating order and the same seed within a pair. Printed per phase:
    the median of each and the ratio of medians PyNN / PyNEST (a measurement, no goal); the
    synapse counts of every pair (must be equal) and the population rates (must agree within the
    seed-to-seed spread, as in the oracle test: |mean difference| <= 2 x spread + 2 %).

Timings are noisy (shared cores, no pinning): every summary is a median over points or pairs, not a
mean, and a MISS by a few percent with few reps is within noise; rerun with more --reps before
acting on it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from snnbench.dev.bench_overhead import bench_snakemake, bench_wrapper
from snnbench.dev.bench_simulators import bench_pynn, bench_reference
from snnbench.dev.benchkit import bench_config
from snnbench.paths import REPO


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m snnbench.dev.bench", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    parser.add_argument("--reps", type=int, default=3, help="seeds (points, pairs) per measurement (default 3)")
    parser.add_argument("--scale", type=float, default=0.1, help="neuron scale N (default 0.1)")
    parser.add_argument("--indegree-scale", type=float, default=0.1, help="in-degree scale K (default 0.1)")
    parser.add_argument("--threads", type=int, default=1, help="OpenMP threads per point (default 1)")
    parser.add_argument("--t-presim", type=float, default=100.0, help="presimulation, ms (default 100)")
    parser.add_argument("--t-sim", type=float, default=1000.0, help="measured simulation, ms (default 1000)")
    parser.add_argument("--seed", type=int, default=55, help="first seed; seeds are seed .. seed+reps-1 (default 55)")
    parser.add_argument(
        "--only",
        choices=["wrapper", "snakemake", "reference", "slurm", "pynn"],
        action="append",
        help="run only these parts; slurm and pynn run only when named (slurm needs a SLURM cluster: "
        "tests/slurm/cluster.sh)",
    )
    args = parser.parse_args(argv)
    if args.reps < 1 or args.threads < 1:
        parser.error("--reps and --threads must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    config = bench_config(args)
    parts = args.only or ["wrapper", "snakemake", "reference"]
    print(
        f"snnbench bench: PD14 N={args.scale:g} K={args.indegree_scale:g}, {args.threads} thread(s), "
        f"{args.t_presim:g} + {args.t_sim:g} ms, {args.reps} rep(s), seeds {config['experiments'][0]['seeds']}, "
        f"{os.cpu_count()} cpu(s), load {os.getloadavg()[0]:.2f}"
    )
    verdicts = []
    # SLURM's nodes see the repository (they run its environments) but not this machine's /tmp.
    shared = REPO if "slurm" in parts else None
    with tempfile.TemporaryDirectory(prefix="snnbench-bench-", dir=shared) as tmp:
        if "wrapper" in parts:
            verdicts += bench_wrapper(config, Path(tmp))
        if "snakemake" in parts:
            verdicts += bench_snakemake(config, Path(tmp))
        if "reference" in parts:
            verdicts += bench_reference(config, Path(tmp))
        if "slurm" in parts:
            verdicts += bench_snakemake(config, Path(tmp), profile="slurm")
        if "pynn" in parts:
            verdicts += bench_pynn(args, Path(tmp))
    print("\nGoals")
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
