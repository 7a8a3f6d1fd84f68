"""What the benches share: the bench experiment, child processes, verdicts, interleaved seed pairs."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from snnbench import planning
from snnbench.network.simulators import python_for

GOAL_OVERHEAD_S = 2.0
GOAL_OVERHEAD_PCT = 5.0
GOAL_RATIO = 1.05


def bench_config(args: argparse.Namespace, name: str = "bench", simulators: tuple = ("nest",)) -> dict:
    """A validated config (schema defaults filled in) with one experiment: one shape, `reps` seeds."""
    config = {
        "experiments": [
            {
                "name": name,
                "description": "snnbench.dev.bench: workflow overhead per point",
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
    planning.plan(config)  # checked and its defaults filled in, as the workflow plans it
    return config


def child_env(threads: int) -> dict:
    env = dict(os.environ)
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


def run_simulate(spec: dict, point: Path) -> tuple[dict, Path]:
    """One point, bare: `python -m snnbench.network.run` in a fresh process of the simulator's
    environment. Returns rank 0's record and the folder with its spikes."""
    point.mkdir()
    spec_path = point / "spec.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    threads = spec["resources"]["threads_per_rank"]
    command = [python_for(spec), "-m", "snnbench.network.run", spec_path, point / "out"]
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
