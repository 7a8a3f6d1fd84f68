"""Numbers that survive noisy neighbours, on a real history: `make bench-history-noise` runs a small PD14 point
set through the workflow again and again, each run in its own results folder added to one fresh history as if it
were the next snnbench commit, and judges the history as a user would.

    .venv/bin/python -m snnbench.dev.bench_history_noise [--unchanged 8] [--slowed 3] [--seeds 3] [--out DIR]
    .venv/bin/python -m snnbench.dev.bench_history_noise --report DIR      # the table of a bench already run

The runs: `--unchanged` runs of unchanged code, then `--slowed` runs whose simulate phase does 15 % more work
(snnbench.dev.extra_work, CPU time too: busy work, not sleep); a CPU burner (one busy process pinned to each CPU the
points may get) is on in every second run, from the second on. After each add the gate (snnbench.results.gate,
its defaults: each series' last 5 runs, tolerance 0.1) judges the run. At the end the step finder
(snnbench.results.steps) runs over every series x metric of wall and CPU time: on the history of the unchanged runs
alone (every step found there is a false one), and on the whole history (the slowdown should be found between the
last unchanged run and the first slowed one). The table is printed and written to DIR/summary.txt; the history,
each run's results and the gate's outputs stay in DIR.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import yaml

from snnbench import paths
from snnbench.dev import extra_work
from snnbench.network.phases import PHASES
from snnbench.results import history, steps
from snnbench.tables.frames import read_points, write_table

EXPERIMENT = "noise"
SLOWDOWN = 0.15
# Wall and CPU time of every phase, the total, the RTF and Snakemake's wall time of the job.
TIMED = [
    *(f"time_{phase}_s" for phase in (*PHASES, "total")),
    *(f"cpu_{phase}_s" for phase in PHASES),
    "real_time_factor",
    "job_wall_s",
]
# What the slowed simulate phase moves (the others must not move).
MOVED = ["time_simulate_s", "cpu_simulate_s", "time_total_s", "real_time_factor", "job_wall_s"]
FIRST_COMMIT_UTC = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
BURN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nwhile True:\n    pass\n"


@dataclass(frozen=True)
class Run:
    index: int  # from 1
    burner: bool
    slowed: bool

    @property
    def commit(self) -> str:  # a made-up commit per run: the history sees successive commits of snnbench
        return history.digest(f"bench-history-noise run {self.index}") * 2 + "0" * 8

    @property
    def commit_utc(self) -> str:
        return (FIRST_COMMIT_UTC + datetime.timedelta(days=self.index)).isoformat()

    @property
    def label(self) -> str:
        return f"run{self.index:02d}"


def plan_runs(unchanged: int, slowed: int) -> list[Run]:
    """The unchanged runs, then the slowed ones; the burner on in every second run (off in the first)."""
    return [Run(i, burner=i % 2 == 0, slowed=i > unchanged) for i in range(1, unchanged + slowed + 1)]


def experiment_config(args: argparse.Namespace) -> dict:
    pd14 = {
        "neuron_scale": args.scale,
        "indegree_scale": args.indegree_scale,
        "t_presim_ms": 100,
        "t_sim_ms": args.t_sim,
    }
    experiment = {
        "name": EXPERIMENT,
        "simulators": [extra_work.NAME],
        "scaling": "strong",
        "resources": {"threads_per_rank": [1]},
        "pd14": pd14,
        "seeds": list(range(1, args.seeds + 1)),
    }
    return {"experiments": [experiment], "figures": {"experiment": {}}}  # no figures: not what is measured


@contextlib.contextmanager
def burner(on: bool):
    """One busy process pinned to each CPU this process may use (so to whichever the point gets), while inside."""
    started = (
        [subprocess.Popen([sys.executable, "-c", BURN, str(cpu)]) for cpu in os.sched_getaffinity(0)] if on else []
    )
    try:
        yield
    finally:
        for process in started:
            process.kill()
            process.wait()


def run_workflow(workdir: Path, run: Run, log: Path) -> None:
    """One workflow run of the experiment in `workdir`; stops the bench with the log's tail if it fails."""
    env = dict(os.environ, SNNBENCH_NETWORK_SIMULATORS=extra_work.REGISTRY_ENTRY)
    env[extra_work.VARIABLE] = str(SLOWDOWN if run.slowed else 0)
    command = [Path(sys.executable).parent / "snakemake", "--profile", "profiles/local", "--configfile", "noise.yaml"]
    with open(log, "w") as out, burner(run.burner):
        code = subprocess.run(command, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
    if code != 0:
        sys.exit(f"{run.label}: the workflow failed ({code}); see {log}")


def stamp(folder: Path, run: Run) -> None:
    """The run's made-up commit and its date in each record and in the points table (the history reads both)."""
    table = folder / "results" / EXPERIMENT / "points.csv"
    points = read_points(table)
    for path in points["path"]:
        record_file = folder / str(path) / "record.json"
        record = json.loads(record_file.read_text())
        record["provenance"]["workflow"].update(git_commit=run.commit, git_commit_utc=run.commit_utc, git_dirty=False)
        record_file.write_text(json.dumps(record, indent=1))
    write_table(points.assign(git_commit=run.commit, git_commit_utc=run.commit_utc, git_dirty=False), table)


def gate(folder: Path, store: Path) -> dict:
    """The gate's verdict on one run against the history (its own points left out): exit code, flagged metrics."""
    out = folder / "gate.csv"
    table = f"results/{EXPERIMENT}/points.csv"
    command = [sys.executable, "-m", "snnbench.results.gate", table, "--history", str(store), "--out", str(out)]
    proc = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    (folder / "gate.txt").write_text(proc.stdout + proc.stderr)
    ratios = pd.read_csv(out) if out.is_file() else pd.DataFrame()
    slower = sorted(
        {c.removeprefix("change_") for c in ratios if c.startswith("change_") and (ratios[c] == "slower").any()}
    )
    simulate = ratios["ratio_time_simulate_s"].max() if "ratio_time_simulate_s" in ratios else float("nan")
    cpu = ratios["ratio_cpu_simulate_s"].max() if "ratio_cpu_simulate_s" in ratios else float("nan")
    return {"gate_exit": proc.returncode, "gate_slower": " ".join(slower), "gate_simulate": simulate, "gate_cpu": cpu}


def run_all(runs: list[Run], out: Path, args: argparse.Namespace) -> pd.DataFrame:
    """Every run through the workflow, kept in out/<run>, added to out/history and gated; one row per run."""
    workdir = out / "workflow"
    shutil.copytree(paths.REPO, workdir, ignore=paths.copy_ignore(paths.REPO))
    (workdir / "noise.yaml").write_text(yaml.safe_dump(experiment_config(args)))
    store, rows = out / "history", []
    for run in runs:
        began = time.perf_counter()
        shutil.rmtree(workdir / "results", ignore_errors=True)
        (workdir / "results").mkdir()
        run_workflow(workdir, run, out / f"{run.label}.log")
        folder = out / run.label
        folder.mkdir()
        shutil.move(workdir / "results", folder / "results")
        stamp(folder, run)
        history.add(folder, store)
        rows.append({**asdict(run), "commit": run.commit[:10], **gate(folder, store)})
        rows[-1]["run_s"] = round(time.perf_counter() - began, 1)
        print(
            f"{run.label}: burner {'on' if run.burner else 'off'}, {'slowed' if run.slowed else 'unchanged'}, "
            f"gate exit {rows[-1]['gate_exit']} {rows[-1]['gate_slower']}, {rows[-1]['run_s']} s",
            flush=True,
        )
        pd.DataFrame(rows).to_csv(out / "runs.csv", index=False)
    return pd.DataFrame(rows)


def comparisons(past: pd.DataFrame, metrics: list[str]) -> dict:
    """What the step finder weighs over a history, as steps.all_steps walks it: the series, the (series, metric,
    axis) fits with at least two positions, and the neighbouring positions a step could lie between."""
    fits = pairs = 0
    for _, points in past.groupby("series", sort=False):
        for metric in (m for m in metrics if points[m].notna().any()):
            versions = steps.position_labels(points, "version")
            cuts = [(points, "version")] + [(rows, "commit") for _, rows in points.groupby(versions, sort=False)]
            for rows, axis in cuts:
                positions = len(steps.positions(rows, metric, axis))
                fits, pairs = fits + (positions >= 2), pairs + max(positions - 1, 0)
    return {"series": past["series"].nunique(), "metrics": len(metrics), "fits": fits, "pairs": pairs}


def per_run(past: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per run: its points' medians of simulate's wall and CPU time, others' share of the CPUs, the disturbed."""
    rows = []
    for run in runs.itertuples():
        points = past[(past["git_commit"].str.slice(0, 10) == run.commit) & past["valid"].astype(bool)]
        wall, cpu = points["time_simulate_s"].median(), points["cpu_simulate_s"].median()
        rows.append(
            {
                "run": f"run{run.index:02d}",
                "code": f"+{SLOWDOWN:.0%} work" if run.slowed else "unchanged",
                "burner": "on" if run.burner else "off",
                "disturbed": f"{int(points['disturbed'].eq(True).sum())}/{len(points)}",
                "others": points["others_cpu_fraction"].median(),
                "simulate_wall_s": wall,
                "simulate_cpu_s": cpu,
                "wall/cpu": wall / cpu,
                "gate": f"exit {run.gate_exit}" + (f": slower {run.gate_slower}" if run.gate_slower else ""),
                "gate_simulate_wall": run.gate_simulate,
                "gate_simulate_cpu": run.gate_cpu,
            }
        )
    return pd.DataFrame(rows)


def slowdown(past: pd.DataFrame, found: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per metric the slowed simulate moves: the step found where the slowed runs begin (after an unchanged run's
    position, its ratio; or none), the ratio of the medians of the points the finder uses (slowed / unchanged)
    for scale, and the other steps found."""
    first, unchanged = runs[runs["slowed"]]["commit"].iloc[0], set(runs[~runs["slowed"]]["commit"])
    used = steps.measured(past, "time_simulate_s")
    slowed = used["git_commit"].str.slice(0, 10).isin(set(runs[runs["slowed"]]["commit"]))
    rows = []
    for metric in MOVED:
        mine = found[found["metric"] == metric]
        at = mine[mine["before"].isin(unchanged) & (mine["after"] == first)]
        rows.append(
            {
                "metric": metric,
                "step at the slowdown": f"x{at['ratio'].iloc[0]:.3f}" if len(at) else "not found",
                "medians slowed/unchanged": used.loc[slowed, metric].median() / used.loc[~slowed, metric].median(),
                "other steps": "; ".join(
                    f"{s.before}->{s.after} x{s.ratio:.3f}" for s in mine.drop(at.index).itertuples()
                ),
            }
        )
    return pd.DataFrame(rows)


def show(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.3f}") if len(frame) else "(none)"


def judged(past: pd.DataFrame, runs: pd.DataFrame, keep_disturbed: bool) -> list[str]:
    """The step finder's verdicts on the history: the steps on the unchanged runs alone (each a false one, with
    the comparisons made), the slowdown's step, and steps in metrics the slowdown does not move."""
    view = past.assign(disturbed=False) if keep_disturbed else past
    unchanged = view[view["git_commit"].str.slice(0, 10).isin(set(runs[~runs["slowed"]]["commit"]))]
    counted, false_steps = comparisons(unchanged, TIMED), steps.all_steps(unchanged, TIMED)
    found = steps.all_steps(view, TIMED)
    used = len(steps.measured(view, "time_simulate_s"))
    return [
        f"== The step finder, {'disturbed points kept' if keep_disturbed else 'as it is (disturbed points left out)'}: "
        f"{used} of {len(view)} points used",
        f"Unchanged code ({unchanged['run'].nunique()} runs): {counted['series']} series x {counted['metrics']} "
        f"metrics (wall and CPU time of each phase, total, RTF, job wall) = {counted['fits']} fits with two or more "
        f"positions, {counted['pairs']} neighbouring positions compared; steps reported: {len(false_steps)}",
        *([show(false_steps)] if len(false_steps) else []),
        f"The slowdown (+{SLOWDOWN:.0%} simulate work from {runs[runs['slowed']]['commit'].iloc[0]} on), whole "
        f"history, {comparisons(view, TIMED)['pairs']} neighbouring positions compared:",
        show(slowdown(view, found, runs)),
        f"Steps in metrics the slowdown does not move: {int((~found['metric'].isin(MOVED)).sum())}",
        "",
    ]


def summary(store: Path, runs: pd.DataFrame) -> str:
    """The bench's table: per run and gate; the step finder's verdicts without and with the disturbed points."""
    past = history.read(store)
    names = {commit: f"run{index:02d}" for commit, index in zip(runs["commit"], runs["index"], strict=True)}
    past = past.assign(git_commit=past["git_commit"].str.slice(0, 10).map(names).fillna(past["git_commit"]))
    runs = runs.assign(commit=runs["commit"].map(names))  # positions named by run, not by their made-up commit
    return "\n".join(
        [
            f"history {store}: {len(past)} points, {past['series'].nunique()} series, {past['run'].nunique()} runs",
            "",
            "Per run (medians over its seeds; gate: against each series' last 5 runs, tolerance 0.1):",
            show(per_run(past, runs)),
            "",
            *judged(past, runs, keep_disturbed=False),
            *judged(past, runs, keep_disturbed=True),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m snnbench.dev.bench_history_noise", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--unchanged", type=int, default=8, help="runs of unchanged code (default 8)")
    parser.add_argument("--slowed", type=int, default=3, help="runs with 15 %% more simulate work (default 3)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per run (default 3)")
    parser.add_argument("--scale", type=float, default=0.05, help="PD14's neuron scale (default 0.05)")
    parser.add_argument("--indegree-scale", type=float, default=0.1, help="PD14's K (default 0.1: active enough)")
    parser.add_argument("--t-sim", type=float, default=500, help="simulated time, ms (default 500; 100 presimulated)")
    parser.add_argument("--out", type=Path, help="the bench's folder (default a new one under the temp folder)")
    parser.add_argument("--report", type=Path, help="print the table of the bench run in this folder")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    if args.report:
        runs = pd.read_csv(args.report / "runs.csv", dtype={"commit": str, "gate_slower": str})
        out, runs = args.report, runs.fillna({"gate_slower": ""})
    else:
        out = args.out or Path(tempfile.mkdtemp(prefix="snnbench-history-noise-"))
        out.mkdir(parents=True, exist_ok=True)
        print(f"bench folder {out}", flush=True)
        runs = run_all(plan_runs(args.unchanged, args.slowed), out, args)
    text = summary(out / "history", runs)
    if not args.report:
        text += f"\n\nbench wall time {time.perf_counter() - began:.0f} s ({len(runs)} runs)"
    (out / "summary.txt").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
