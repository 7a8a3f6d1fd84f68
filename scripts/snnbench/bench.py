"""Benchmark of the benchmark: what the workflow costs per point, and how our PD14 on NEST compares
with INM-6's reference implementation. Not a test: it measures and prints, and says PASS or MISS
against the goals below. Run from the repository root:

    make bench ARGS="--reps 3"
    PYTHONPATH=scripts .venv/bin/python -m snnbench.bench [--reps N] [--scale S] [--threads T]

It measures, at one model size (neuron scale S, in-degree scale K), one thread count and `reps` seeds:

1a. Wrapper overhead: each seed's point run through `snnbench.execute.run_point`, as the workflow
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
2.  Ours vs reference: `python -m snnbench.simulate` (bare, no wrapper) and `python -m snnbench.oracle`
    (the `microcircuit` package) in fresh processes, interleaved with alternating order (ours first
    in even pairs, reference first in odd ones), the same seed within a pair. Compared: the sum of
    all phases (`total`, interpreter start not included in either) and the simulate phase alone.
    Goal: ratio of medians ours / reference <= 1.05. Synapse counts of both must be equal.
3.  PyNN on NEST vs PyNEST (`--only pynn`, or `make bench-pynn`; not part of the default run):
    `python -m snnbench.simulate` for simulators `pynn-nest` and `nest`, bare, in fresh processes,
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
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import numpy as np
import yaml
from snakemake.utils import validate

from snnbench import activity, pd14
from snnbench.config import CONFIG_SCHEMA, REPO, expand_points, time_limit_s
from snnbench.execute import run_point
from snnbench.simulators import python_for
from snnbench.simulators.base import PHASES

GOAL_OVERHEAD_S = 2.0
GOAL_OVERHEAD_PCT = 5.0
GOAL_RATIO = 1.05
# Not copied into the throw-away repository of the Snakemake run.
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".venv-*", ".snakemake", "results", "logs", "benchmarks", "__pycache__", ".pytest_cache", ".ruff_cache"
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m snnbench.bench", description=__doc__.split("\n\n")[0], allow_abbrev=False
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


def bench_config(args: argparse.Namespace, name: str = "bench", simulators: tuple = ("nest",)) -> dict:
    """A validated config (schema defaults filled in) with one experiment: one shape, `reps` seeds."""
    config = {
        "experiments": [
            {
                "name": name,
                "description": "snnbench.bench: workflow overhead per point",
                "simulators": list(simulators),
                "scaling": "strong",
                "resources": {"threads_per_rank": [args.threads]},
                "pd14": {
                    "neuron_scale": args.scale,
                    "indegree_scale": args.indegree_scale,
                    "t_presim_ms": args.t_presim,
                    "t_sim_ms": args.t_sim,
                    "input": "poisson",
                },
                "seeds": [args.seed + i for i in range(args.reps)],
            }
        ]
    }
    validate(config, str(CONFIG_SCHEMA))
    return config


def child_env(threads: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "scripts"), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = str(threads)
    return env


def run_checked(command: list, log_path: Path, **kwargs) -> None:
    """Run a command with its output going to log_path; on failure show the log's tail and stop."""
    with open(log_path, "w") as log:
        code = subprocess.run([str(c) for c in command], stdout=log, stderr=subprocess.STDOUT, **kwargs).returncode
    if code != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-30:])
        sys.exit(f"command failed ({code}): {' '.join(map(str, command))}\n{tail}")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def overhead_verdict(label: str, rows: list[dict]) -> str:
    """PASS if the median overhead over the points meets both goals (seconds and percent)."""
    med_s = median([r["wall"] - r["total"] for r in rows])
    med_pct = median([100.0 * (r["wall"] - r["total"]) / r["total"] for r in rows])
    ok = med_s <= GOAL_OVERHEAD_S and med_pct <= GOAL_OVERHEAD_PCT
    return (
        f"{verdict(ok)}  {label}: median overhead {med_s:.2f} s, {med_pct:.1f} % "
        f"(goal <= {GOAL_OVERHEAD_S:g} s and <= {GOAL_OVERHEAD_PCT:g} %)"
    )


def print_overhead_table(rows: list[dict], extra: str | None) -> None:
    """rows: seed, total (phases), wall (the measured wall time), and optionally the extra column."""
    head = f"{'seed':>6}  {'phases total s':>14}  {'wall s':>8}  {'overhead s':>10}  {'overhead %':>10}"
    if extra:
        head += f"  {extra:>8}"
    print(head)
    for r in rows:
        line = (
            f"{r['seed']:>6}  {r['total']:>14.2f}  {r['wall']:>8.2f}  {r['wall'] - r['total']:>10.2f}  "
            f"{100.0 * (r['wall'] - r['total']) / r['total']:>10.1f}"
        )
        if extra:
            line += f"  {r['extra']:>8.2f}"
        print(line)
    overheads = [r["wall"] - r["total"] for r in rows]
    pcts = [100.0 * (r["wall"] - r["total"]) / r["total"] for r in rows]
    line = (
        f"{'median':>6}  {median([r['total'] for r in rows]):>14.2f}  {median([r['wall'] for r in rows]):>8.2f}  "
        f"{median(overheads):>10.2f}  {median(pcts):>10.1f}"
    )
    if extra:
        line += f"  {median([r['extra'] for r in rows]):>8.2f}"
    print(line)


def bench_wrapper(config: dict, tmp: Path) -> list[str]:
    """1a: run_point on each seed's point; record wall time vs the phases inside the child."""
    rows = []
    for spec in expand_points(config["experiments"][0]):
        point = tmp / f"wrapper-seed{spec['seed']}"
        point.mkdir()
        spec_path = point / "spec.json"
        spec_path.write_text(json.dumps(spec, indent=1))
        start = time.perf_counter()
        rec = run_point(
            spec_path,
            point / "record.json",
            point / "spikes.npz",
            point / "execute.log",
            bounds=config["activity_check"],
            time_limit_s=time_limit_s(config, spec),
        )
        call_s = time.perf_counter() - start
        if rec["status"] != "ok":
            sys.exit(f"run_point failed for seed {spec['seed']}: {rec['failure']['reason']}")
        rows.append(
            {"seed": spec["seed"], "total": rec["phases_s"]["total"], "wall": rec["wall_time_s"], "extra": call_s}
        )
    print("\n1a. Wrapper overhead per point: snnbench.execute.run_point (wall = record wall_time_s; call = whole call)")
    print_overhead_table(rows, extra="call s")
    return [overhead_verdict("wrapper (record wall_time_s - phases total)", rows)]


def bench_snakemake(config: dict, tmp: Path, profile: str = "local") -> list[str]:
    """1b: the real workflow on a copy of the repository; job wall time (benchmark `s`) vs phases.
    With profile "slurm" every point is a job on the SLURM cluster this machine submits to."""
    snakemake = REPO / ".venv" / "bin" / "snakemake"
    if not snakemake.exists():
        snakemake = Path(shutil.which("snakemake") or sys.exit("no snakemake found (run `make env`)"))
    workdir = tmp / f"repo-{profile}"
    shutil.copytree(REPO, workdir, ignore=COPY_IGNORE, symlinks=True)
    experiment = config["experiments"][0]
    # Only the experiment: the rest of the config (activity_check) comes from config/config.yaml.
    config_path = tmp / "bench-config.yaml"
    config_path.write_text(yaml.safe_dump({"experiments": [experiment]}, sort_keys=False))
    command = [snakemake, "--profile", f"profiles/{profile}", "--configfile", config_path]
    if profile == "slurm":
        # Poll every 2 s (the profile's defaults are kinder to a busy slurmctld, and slower).
        command += ["--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2"]
    start = time.perf_counter()
    run_checked(command, tmp / f"snakemake-{profile}.log", cwd=workdir)
    total_wall_s = time.perf_counter() - start

    rows = []
    specs = expand_points(experiment)
    for spec in specs:
        rec = json.loads((workdir / spec["path"] / "record.json").read_text())
        if rec["status"] != "ok":
            sys.exit(f"workflow point {spec['path']} failed: {rec['failure']['reason']}")
        bench_path = workdir / (spec["path"].replace("results/", "benchmarks/execute/", 1) + ".tsv")
        with open(bench_path) as f:
            job_s = float(next(csv.DictReader(f, delimiter="\t"))["s"])
        rows.append({"seed": spec["seed"], "total": rec["phases_s"]["total"], "wall": job_s})
    print(f"\n1b. Snakemake overhead per point, profiles/{profile}: execute_point job (wall = benchmark column s)")
    print_overhead_table(rows, extra=None)
    jobs_s = sum(r["wall"] for r in rows)
    print(
        f"whole snakemake run: {total_wall_s:.2f} s for {len(specs)} points = {total_wall_s / len(specs):.2f} s/point "
        f"({total_wall_s - jobs_s:.2f} s outside the point jobs: DAG, specs, submission and polling, tables, figures)"
    )
    return [overhead_verdict(f"snakemake {profile} (job s - phases total)", rows)] + [
        f"INFO  snakemake {profile}: whole run {total_wall_s / len(specs):.2f} s per point"
    ]


def run_simulate(spec: dict, point: Path) -> tuple[dict, Path]:
    """One point, bare: `python -m snnbench.simulate` in a fresh process of the simulator's
    environment. Returns rank 0's record and the folder with its spikes."""
    point.mkdir()
    spec_path = point / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    threads = spec["resources"]["threads_per_rank"]
    command = [python_for(spec), "-m", "snnbench.simulate", spec_path, point / "out"]
    run_checked(command, point / "simulate.log", env=child_env(threads))
    return json.loads((point / "out" / "rank0.json").read_text()), point / "out"


def interleaved_pairs(specs: list[dict], simulators: tuple[str, ...], run: Callable[[dict], dict]) -> list[dict]:
    """The points of one seed as a pair, run one after the other: `simulators` in order in even
    pairs, reversed in odd ones (neither always meets a cold or a warm machine). One row per
    seed: seed, which ran first, and each simulator's result."""
    by_seed: dict = {}
    for spec in specs:
        by_seed.setdefault(spec["seed"], {})[spec["simulator"]] = spec
    rows = []
    for i, (seed, pair) in enumerate(sorted(by_seed.items())):
        order = simulators if i % 2 == 0 else simulators[::-1]
        rows.append({"seed": seed, "first": order[0], **{simulator: run(pair[simulator]) for simulator in order}})
    return rows


def run_ours(spec: dict, tmp: Path) -> dict:
    """Our PD14 on NEST, bare: `python -m snnbench.simulate`, one fresh process."""
    rank, _ = run_simulate(spec, tmp / f"ours-seed{spec['seed']}")
    return {
        "total": sum(rank["phases_s"][p] for p in PHASES),
        "simulate": rank["phases_s"]["simulate"],
        "synapses": rank["local_synapses"],
    }


def run_reference(spec: dict, tmp: Path) -> dict:
    """INM-6's reference implementation with the same phases: `python -m snnbench.oracle`."""
    point = tmp / f"reference-seed{spec['seed']}"
    point.mkdir()
    model, threads = spec["model"], spec["resources"]["threads_per_rank"]
    out = point / "oracle.json"
    command = [sys.executable, "-m", "snnbench.oracle", model["neuron_scale"], model["indegree_scale"], threads]
    command += [spec["seed"], model["t_presim_ms"], model["t_sim_ms"], out]
    run_checked(command, point / "oracle.log", env=child_env(threads))
    result = json.loads(out.read_text())
    return {
        "total": result["phases_s"]["total"],
        "simulate": result["phases_s"]["simulate"],
        "synapses": result["num_synapses"],
    }


def bench_reference(config: dict, tmp: Path) -> list[str]:
    """2: ours vs the reference implementation, interleaved pairs with the same seed."""
    rows = []
    for i, spec in enumerate(expand_points(config["experiments"][0])):
        if i % 2 == 0:
            ours = run_ours(spec, tmp)
            ref = run_reference(spec, tmp)
        else:
            ref = run_reference(spec, tmp)
            ours = run_ours(spec, tmp)
        rows.append({"seed": spec["seed"], "first": "ours" if i % 2 == 0 else "ref", "ours": ours, "ref": ref})

    print("\n2. Our NEST PD14 vs reference (microcircuit), bare processes, interleaved pairs")
    print(
        f"{'seed':>6}  {'first':>5}  {'total ours s':>12}  {'total ref s':>11}  {'sim ours s':>10}  {'sim ref s':>9}  "
        f"{'synapses ours':>13}  {'synapses ref':>12}"
    )
    for r in rows:
        o, f = r["ours"], r["ref"]
        print(
            f"{r['seed']:>6}  {r['first']:>5}  {o['total']:>12.2f}  {f['total']:>11.2f}  {o['simulate']:>10.2f}  "
            f"{f['simulate']:>9.2f}  {o['synapses']:>13}  {f['synapses']:>12}"
        )
    med = {(who, key): median([r[who][key] for r in rows]) for who in ("ours", "ref") for key in ("total", "simulate")}
    print(
        f"{'median':>6}  {'':>5}  {med['ours', 'total']:>12.2f}  {med['ref', 'total']:>11.2f}  "
        f"{med['ours', 'simulate']:>10.2f}  {med['ref', 'simulate']:>9.2f}"
    )
    ratios = {key: med["ours", key] / med["ref", key] for key in ("total", "simulate")}
    print(f"ratio of medians ours/reference: total {ratios['total']:.3f}, simulate {ratios['simulate']:.3f}")
    differ = [r for r in rows if r["ours"]["synapses"] != r["ref"]["synapses"]]
    if differ:
        print(
            "NOTE: synapse counts differ for seed(s) "
            + ", ".join(f"{r['seed']} (ours {r['ours']['synapses']}, ref {r['ref']['synapses']})" for r in differ)
            + ": the networks are not the same size, so the timings do not compare like with like"
        )
    else:
        print(f"synapse counts equal in every pair ({rows[0]['ours']['synapses']})")
    return [
        f"{verdict(ratios[key] <= GOAL_RATIO)}  ours/reference {key}: ratio of medians {ratios[key]:.3f} "
        f"(goal <= {GOAL_RATIO:g})"
        for key in ("total", "simulate")
    ] + ([f"MISS  synapse counts differ in {len(differ)} of {len(rows)} pairs"] if differ else [])


def run_front_end(spec: dict, tmp: Path) -> dict:
    """One bare point of `nest` or `pynn-nest`: phase times, synapse count and population rates."""
    rank, out = run_simulate(spec, tmp / f"{spec['simulator']}-seed{spec['seed']}")
    model = spec["model"]
    spikes = np.load(out / "rank0.npz")
    net = pd14.derive(model["neuron_scale"], model["indegree_scale"], model["input"])
    stats = activity.population_stats(
        spikes["senders"], spikes["times_ms"], rank["population_first_ids"], net.num_neurons.tolist(), model["t_sim_ms"]
    )
    phases = dict(rank["phases_s"], total=sum(rank["phases_s"][p] for p in PHASES))
    return {"phases": phases, "synapses": rank["local_synapses"], "rates": [row["rate_hz"] for row in stats]}


def bench_pynn(args: argparse.Namespace, tmp: Path) -> list[str]:
    """3: PyNN on NEST vs PyNEST, interleaved pairs with the same seed, per phase."""
    simulators = ("nest", "pynn-nest")
    specs = expand_points(bench_config(args, simulators=simulators)["experiments"][0])
    rows = interleaved_pairs(specs, simulators, lambda spec: run_front_end(spec, tmp))

    print("\n3. PyNN on NEST vs PyNEST, bare processes, interleaved pairs (same seed within a pair)")
    print(
        f"{'seed':>6}  {'first':>9}  " + "  ".join(f"{p:>11}" for p in (*PHASES, "total")) + "  (s, nest / pynn-nest)"
    )
    for r in rows:
        cells = [f"{r['nest']['phases'][p]:>5.2f}/{r['pynn-nest']['phases'][p]:<5.2f}" for p in (*PHASES, "total")]
        print(f"{r['seed']:>6}  {r['first']:>9}  " + "  ".join(cells))
    print(f"\n{'phase':>12}  {'PyNEST s':>9}  {'PyNN s':>9}  {'PyNN/PyNEST':>11}  (medians over {len(rows)} seed(s))")
    for phase in (*PHASES, "total"):
        native = median([r["nest"]["phases"][phase] for r in rows])
        pynn = median([r["pynn-nest"]["phases"][phase] for r in rows])
        ratio = f"{pynn / native:>11.2f}" if native > 0 else f"{'-':>11}"
        print(f"{phase:>12}  {native:>9.3f}  {pynn:>9.3f}  {ratio}")
    print("PyNN has no separate prepare step: NEST's preparation happens inside its first run (presimulate).")

    print(f"\n{'seed':>6}  {'synapses PyNEST':>15}  {'synapses PyNN':>13}")
    for r in rows:
        print(f"{r['seed']:>6}  {r['nest']['synapses']:>15}  {r['pynn-nest']['synapses']:>13}")
    same_synapses = all(r["nest"]["synapses"] == r["pynn-nest"]["synapses"] for r in rows)

    rates = {who: np.array([r[who]["rates"] for r in rows]) for who in ("nest", "pynn-nest")}
    spread = np.maximum(np.ptp(rates["nest"], axis=0), np.ptp(rates["pynn-nest"], axis=0))
    difference = np.abs(rates["pynn-nest"].mean(axis=0) - rates["nest"].mean(axis=0))
    tolerance = 2 * spread + 0.02 * rates["nest"].mean(axis=0)
    print(f"\n{'population':>10}  {'PyNEST Hz':>9}  {'PyNN Hz':>9}  {'|diff|':>7}  {'spread':>7}")
    for j, name in enumerate(pd14.POPULATIONS):
        print(
            f"{name:>10}  {rates['nest'][:, j].mean():>9.3f}  {rates['pynn-nest'][:, j].mean():>9.3f}  "
            f"{difference[j]:>7.3f}  {spread[j]:>7.3f}"
        )
    rates_ok = bool(np.all(difference <= tolerance))
    note = "" if len(rows) > 1 else " (one seed: no spread to compare with; use --reps 2 or more)"
    return [
        f"{verdict(same_synapses)}  PyNN/PyNEST synapse counts equal in every pair",
        f"{verdict(rates_ok)}  PyNN/PyNEST rates within 2 x seed-to-seed spread + 2 %{note}",
    ]


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
