"""The workflow's overhead per point: our wrapper (run_point) and Snakemake (local or SLURM profile)."""

from __future__ import annotations

import csv
import json
import shutil
import sys
import time
from pathlib import Path
from statistics import median

import yaml

from snnbench import paths
from snnbench.dev.benchkit import GOAL_OVERHEAD_PCT, GOAL_OVERHEAD_S, run_checked, verdict
from snnbench.network.execute import run_point
from snnbench.paths import REPO
from snnbench.planning.experiments import expand_points, time_limit_s


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
            time_limit_s=time_limit_s(config, spec),
        )
        call_s = time.perf_counter() - start
        if rec["status"] != "ok":
            sys.exit(f"run_point failed for seed {spec['seed']}: {rec['failure']['reason']}")
        rows.append(
            {"seed": spec["seed"], "total": rec["phases_s"]["total"], "wall": rec["wall_time_s"], "extra": call_s}
        )
    print("\n1a. Wrapper overhead per point: network.execute.run_point (wall = record wall_time_s; call = whole call)")
    print_overhead_table(rows, extra="call s")
    return [overhead_verdict("wrapper (record wall_time_s - phases total)", rows)]


def bench_snakemake(config: dict, tmp: Path, profile: str = "local") -> list[str]:
    """1b: the real workflow on a copy of the repository; job wall time (benchmark `s`) vs phases.
    With profile "slurm" every point is a job on the SLURM cluster this machine submits to."""
    snakemake = REPO / ".venv" / "bin" / "snakemake"
    if not snakemake.exists():
        snakemake = Path(shutil.which("snakemake") or sys.exit("no snakemake found (run `make env`)"))
    workdir = tmp / f"repo-{profile}"
    shutil.copytree(REPO, workdir, ignore=paths.copy_ignore(REPO), symlinks=True)
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
        bench_path = workdir / paths.point_benchmark(spec["path"])
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
