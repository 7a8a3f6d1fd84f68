"""Brian2 cpp_standalone against NEST on the same point: `make bench-brian2 ARGS="--reps 3"`.

    .venv/bin/python -m snnbench.dev.bench_brian2 [--reps N] [--scale S]
        [--indegree-scale K] [--threads T] [--t-presim MS] [--t-sim MS] [--seed SEED]

Runs `python -m snnbench.network.run` (bare, no workflow) for NEST (.venv) and for `brian2-cpp`
(.venv-brian2) on the same spec, one seed per pair, alternating which goes first. Prints each
pair's simulate-phase wall time and real-time factor, Brian2's build apart (code generation and
compilation: the first pair compiles unless an earlier run left the build in the cache, later
seeds reuse the binary), and the ratio of medians Brian2 / NEST for the simulate phase.
Goal: Brian2's simulation RTF <= 2x NEST's on the same cores. Brian2's simulate phase is the
binary's own timer (see snnbench.network.simulators.brian2.pd14); NEST's is the wall time of its Run call.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from statistics import median

from snnbench import planning
from snnbench.dev.benchkit import bench_config, interleaved_pairs, run_simulate
from snnbench.network.simulators import EnvironmentMissing, python_for

GOAL_RATIO = 2.0
SIMULATORS = ("nest", "brian2-cpp")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m snnbench.dev.bench_brian2", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="seeds (pairs) (default 3)")
    parser.add_argument("--scale", type=float, default=0.1, help="neuron scale N (default 0.1)")
    parser.add_argument("--indegree-scale", type=float, default=0.1, help="in-degree scale K (default 0.1)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="threads (default: all cores)")
    parser.add_argument("--t-presim", type=float, default=100.0, help="presimulation, ms (default 100)")
    parser.add_argument("--t-sim", type=float, default=1000.0, help="measured simulation, ms (default 1000)")
    parser.add_argument("--seed", type=int, default=55, help="first seed (default 55)")
    args = parser.parse_args(argv)
    if args.reps < 1 or args.threads < 1:
        parser.error("--reps and --threads must be at least 1")
    return args


def specs(args: argparse.Namespace) -> list[dict]:
    config = bench_config(args, name="bench-brian2", simulators=tuple(SIMULATORS))  # schema defaults filled in
    experiment = config["experiments"][0]
    experiment["resources"] = {"nodes": [1], "ranks_per_node": [1], "threads_per_rank": [args.threads]}
    experiment["pd14"]["record_spikes"] = True
    experiment["brian2"] = {"delay_bins": 4}
    planning.plan(config)  # the Brian2 options' defaults too, as the workflow plans them
    return planning.expand_points(config["experiments"][0])


def run(spec: dict, tmp: Path) -> dict:
    rank, _ = run_simulate(spec, tmp / f"{spec['simulator']}-seed{spec['seed']}")
    timers = rank["simulator_timers_s"].get("prepare", {})
    return {
        "simulate": rank["phases_s"]["simulate"],
        "build": timers.get("codegen", 0.0) + timers.get("compile", 0.0),
        "reused": (rank["simulator_info"].get("build") or {}).get("binary_reused"),
        "synapses": rank["local_synapses"],
        "spikes": rank["local_spikes"],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    points = specs(args)
    try:
        for spec in points:
            python_for(spec)
    except EnvironmentMissing as missing:
        sys.exit(str(missing))
    t_sim_s = args.t_sim * 1e-3
    print(
        f"snnbench bench-brian2: PD14 N={args.scale:g} K={args.indegree_scale:g}, {args.threads} thread(s), "
        f"{args.t_presim:g} + {args.t_sim:g} ms, {args.reps} pair(s), {os.cpu_count()} cpu(s), "
        f"load {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory(prefix="snnbench-bench-brian2-") as tmp:
        rows = interleaved_pairs(points, SIMULATORS, lambda spec: run(spec, Path(tmp)))
    print(
        f"\n{'seed':>6}  {'first':>10}  {'NEST sim s':>10}  {'Brian2 sim s':>12}  {'NEST RTF':>8}  "
        f"{'Brian2 RTF':>10}  {'Brian2 build s':>14}  {'reused':>6}  {'synapses N/B':>17}"
    )
    for r in rows:
        n, b = r["nest"], r["brian2-cpp"]
        print(
            f"{r['seed']:>6}  {r['first']:>10}  {n['simulate']:>10.3f}  {b['simulate']:>12.3f}  "
            f"{n['simulate'] / t_sim_s:>8.3f}  {b['simulate'] / t_sim_s:>10.3f}  {b['build']:>14.1f}  "
            f"{str(b['reused']):>6}  {n['synapses']:>8}/{b['synapses']:<8}"
        )
    med_n = median(r["nest"]["simulate"] for r in rows)
    med_b = median(r["brian2-cpp"]["simulate"] for r in rows)
    print(f"{'median':>6}  {'':>10}  {med_n:>10.3f}  {med_b:>12.3f}  {med_n / t_sim_s:>8.3f}  {med_b / t_sim_s:>10.3f}")
    builds = [r["brian2-cpp"]["build"] for r in rows]
    print(
        f"Brian2 build (code generation + compilation), apart from the simulation: first {builds[0]:.1f} s, "
        f"median of the rest {median(builds[1:]) if len(builds) > 1 else float('nan'):.1f} s"
    )
    ratio = med_b / med_n
    verdict = "PASS" if ratio <= GOAL_RATIO else "MISS"
    print(f"\nratio of medians Brian2 cpp_standalone / NEST, simulate phase: {ratio:.2f}")
    print(f"{verdict}  Brian2 simulation RTF <= {GOAL_RATIO:g}x NEST's on the same cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
