"""Pinned against not pinned: `make bench-binding` runs the default experiment (config/config.yaml)
and hpc_benchmark's small preset (config/experiments/hpc-weak-machine.yaml), each bound to cores
and not bound (their `binding`: cores, none), over three seeds, through the workflow on this machine
(profiles/local), then prints per model and shape the simulate phase's median and spread (min-max)
over seeds, pinned beside not pinned, with what each run got (snnbench.network.binding).

    .venv/bin/python -m snnbench.dev.bench_binding [--seeds 55 56 57] [--experiments FILE ...] [--report]

The pinned and the unpinned points of one seed run back to back (one Snakemake run per seed), so
that a change of the machine's load between seeds falls on both; the tables and figures are made
by a last run. The config it runs is written to results/bench-binding.yaml. --report prints the
table of points already run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from snnbench import paths, planning
from snnbench.paths import REPO

EXPERIMENTS = (paths.CONFIG, REPO / "config" / "experiments" / "hpc-weak-machine.yaml")
BINDINGS = {"pinned": "cores", "unpinned": "none"}
CONFIG = Path(paths.RESULTS) / "bench-binding.yaml"


def experiments(files, seeds: list[int]) -> list[dict]:
    """Each experiment of the files twice: <name>-pinned (binding cores), <name>-unpinned (none)."""
    found = []
    for path in files:
        for experiment in yaml.safe_load(Path(path).read_text())["experiments"]:
            for label, binding in BINDINGS.items():
                found.append(dict(experiment, name=f"{experiment['name']}-{label}", binding=binding, seeds=seeds))
    return found


def run(config: Path, seeds: list[int], extra: list[str]) -> None:
    """One Snakemake run per seed (its pinned and unpinned points back to back), then the tables."""
    campaign = planning.plan_files([config])
    snakemake = [str(Path(sys.executable).parent / "snakemake"), "--profile", "profiles/local"]
    for seed in seeds:  # the targets before --configfile, which takes every argument after it
        records = [f"{path}/record.json" for path, spec in campaign.points.items() if spec["seed"] == seed]
        subprocess.run([*snakemake, *records, *extra, "--configfile", str(config)], check=True)
    subprocess.run([*snakemake, *extra, "--configfile", str(config)], check=True)


def spread(values: pd.Series) -> str:
    return f"{values.median():.2f} ({values.min():.2f}-{values.max():.2f}, n={values.size})"


def table(points: pd.DataFrame) -> pd.DataFrame:
    """Per model experiment and shape: the simulate phase, pinned and not pinned, and their ratio."""
    ok = points[points["valid"].astype(bool) & (points["status"] == "ok")].copy()
    ok["model experiment"] = ok["experiment"].str.replace(r"-(un)?pinned$", "", regex=True)
    ok["pinned"] = ok["experiment"].str.endswith("-pinned")
    rows = []
    for (experiment, shape), group in ok.groupby(["model experiment", "shape"], sort=False):
        pinned, loose = group[group["pinned"]], group[~group["pinned"]]
        rows.append(
            {
                "experiment": experiment,
                "shape": shape,
                "pinned simulate s": spread(pinned["time_simulate_s"]) if len(pinned) else "none",
                "not pinned simulate s": spread(loose["time_simulate_s"]) if len(loose) else "none",
                "ratio of medians": pinned["time_simulate_s"].median() / loose["time_simulate_s"].median(),
                "obtained (pinned / not)": f"{'/'.join(sorted(set(pinned['binding_obtained'])))} / "
                f"{'/'.join(sorted(set(loose['binding_obtained'])))}",
                "load 1 min": f"{group['load_average_1min'].median():.1f}",
            }
        )
    return pd.DataFrame(rows)


def report(names: list[str]) -> None:
    tables = [Path(paths.RESULTS) / name / "points.csv" for name in names]
    missing = [str(t) for t in tables if not t.exists()]
    if missing:
        sys.exit(f"no points table: {', '.join(missing)} (run `make bench-binding`)")
    points = pd.concat([pd.read_csv(t) for t in tables], ignore_index=True)
    for _, row in points[~points["valid"].astype(bool)].iterrows():
        print(f"not a result: {row['path']} ({row['status']}; {row.get('failure_reason') or ''})")
    print("simulate phase, s: median (min-max, seeds) per model and shape, bound to cores and not bound")
    print(table(points).to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[55, 56, 57])
    parser.add_argument("--experiments", nargs="+", default=[str(f) for f in EXPERIMENTS])
    parser.add_argument("--report", action="store_true", help="only print the table of points already run")
    args, extra = parser.parse_known_args(argv)
    found = experiments(args.experiments, args.seeds)
    if not args.report:
        CONFIG.parent.mkdir(parents=True, exist_ok=True)
        CONFIG.write_text(yaml.safe_dump({"experiments": found}, sort_keys=False))
        run(CONFIG, args.seeds, extra)
    report([e["name"] for e in found])


if __name__ == "__main__":
    main(sys.argv[1:])
