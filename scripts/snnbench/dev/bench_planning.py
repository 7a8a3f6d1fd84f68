"""What planning costs per Snakemake process, for a small and a large campaign (`make bench-planning`).

Two processes read the workflow: the main one (plans, checks, refuses what cannot run, sets
damaged records aside, then builds the DAG) and each job an executor starts (SLURM: `snakemake
--mode remote` per job, which reads the whole workflow again to run one job). Timed here, each as
a fresh Snakemake process in a throw-away copy of the workflow, median of the repeats:

  main:  `snakemake --list-rules`: everything the main process does before its DAG (no DAG:
         Snakemake's own DAG for 10 000 points is its cost, not planning's).
  point: `snakemake -n results/<one point>/record.json`: a dry run aimed at one point's record (the
         main process's planning, checks and preparation of that point, and its DAG); the goal is
         at most 0.5 s more for 10 000 points than for 10.
  job:   `snakemake --mode remote --target-jobs <one point's execute job> -n`: a job's start-up
         (planning, the rules, the one job's DAG), without running the point.

--workflow DIR times another checkout's workflow and package (e.g. before a change) the same way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

import yaml

from snnbench import paths
from snnbench.paths import REPO

SHAPES = 10  # threads per rank 1..10: one shape each; the seeds make up the rest


def campaign_config(points: int) -> dict:
    """One tiny PD14 experiment with `points` points: SHAPES shapes x points / SHAPES seeds."""
    experiment = {
        "name": "many",
        "simulators": ["nest"],
        "scaling": "strong",
        "resources": {"threads_per_rank": list(range(1, SHAPES + 1))},
        "pd14": {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 50, "t_sim_ms": 200},
        "seeds": list(range(1, points // SHAPES + 1)),
        "time_limit_min": 5,
    }
    return {"experiments": [experiment]}


def timed(command: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(command)}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return elapsed


def commands(config_file: str) -> dict[str, list[str]]:
    snakemake = [str(Path(sys.executable).parent / "snakemake"), "--configfile", config_file, "--cores", "1"]
    point = "nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    job = f"execute_point_pd14:experiment=many,point={point}"
    return {
        "main": [*snakemake, "--list-rules"],
        "point": [*snakemake, "-n", f"results/many/{point}/record.json"],
        "job": [*snakemake, "--mode", "remote", "--target-jobs", job, "--allowed-rules", "execute_point_pd14"]
        + ["--force", "--nolock", "--ignore-incomplete", "--nocolor", "-n"],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, nargs="+", default=[10, 10_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workflow", type=Path, default=REPO, help="checkout whose workflow and package to time")
    args = parser.parse_args(argv)
    workdir = REPO / "snnbench-bench-planning"  # not /tmp: it may be private to a node
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.copytree(args.workflow, workdir, ignore=paths.copy_ignore(args.workflow))
    (workdir / "results").mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(args.workflow.resolve() / "scripts"))
    print(f"workflow: {args.workflow.resolve()}; median of {args.repeats} fresh Snakemake processes, seconds")
    print(f"{'points':>8}  {'main (--list-rules)':>20}  {'one point (-n record)':>22}  {'job start-up':>13}")
    found = []
    for points in args.points:
        config_file = f"config/bench-planning-{points}.yaml"
        (workdir / config_file).write_text(yaml.safe_dump(campaign_config(points)))
        medians = {
            role: median(timed(command, workdir, env) for _ in range(args.repeats))
            for role, command in commands(config_file).items()
        }
        print(f"{points:>8}  {medians['main']:>20.2f}  {medians['point']:>22.2f}  {medians['job']:>13.2f}")
        found.append(medians)
    if len(found) == 2:
        more = found[1]["point"] - found[0]["point"]
        print(f"one point, {args.points[-1]} against {args.points[0]} points: {more:+.2f} s (goal: at most +0.50 s)")
    shutil.rmtree(workdir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
