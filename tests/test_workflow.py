"""End to end: the real workflow (Snakemake + NEST) on tiny PD14 points.

One run makes two experiments: `tiny` (1 and 2 threads) and `tiny-timeout`, whose point cannot
finish in its time limit and must be recorded as failed while the others complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import VENV_BIN, snakemake
from snnbench import figures
from snnbench.failed import failed_records

pytestmark = pytest.mark.slow

TINY = {
    "simulators": ["nest"],
    "scaling": "strong",
    "pd14": {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 50, "t_sim_ms": 200},
    "seeds": [1],
    "time_limit_min": 5,
}
CONFIG = {
    "experiments": [
        dict(TINY, name="tiny", resources={"threads_per_rank": [1, 2]}),
        dict(
            TINY,
            name="tiny-timeout",
            resources={"threads_per_rank": [1]},
            pd14=dict(TINY["pd14"], t_sim_ms=200_000),
            time_limit_min=0.05,  # 3 s: far too short for 200 s of model time
        ),
    ]
}
OK_POINTS = [f"results/tiny/nest/nodes1_ranks1_threads{t}/N0.02_K0.1/seed1" for t in (1, 2)]
FAILED_POINT = "results/tiny-timeout/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"


def write_config(workdir: Path, config: dict, name="test.yaml") -> str:
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return f"config/{name}"


def mtimes(workdir: Path, pattern: str) -> dict[str, int]:
    return {str(p.relative_to(workdir)): p.stat().st_mtime_ns for p in workdir.glob(pattern)}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    import shutil

    from conftest import REPO

    workdir = tmp_path_factory.mktemp("e2e") / "snnbench"
    ignore = shutil.ignore_patterns(".venv*", ".snakemake", "results", "logs", "benchmarks", "__pycache__", ".git")
    shutil.copytree(REPO, workdir, ignore=ignore)
    configfile = write_config(workdir, CONFIG)
    proc = snakemake(workdir, "--configfile", configfile)
    return workdir, configfile, proc


def test_records_tables_and_figures(finished):
    workdir, _, _ = finished
    for point in OK_POINTS:
        rec = json.loads((workdir / point / "record.json").read_text())
        assert rec["status"] == "ok", rec["failure"]
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] > 0
        assert rec["activity"]["checked"] and set(rec["activity"]["rates_hz"]) == set(figures.pd14.POPULATIONS)
        assert rec["simulator"]["name"] == "nest" and rec["provenance"]["packages"]["nest-simulator"]
        assert (workdir / point / "spec.json").exists() and (workdir / point / "spikes.npz").exists()
    threads = [json.loads((workdir / p / "record.json").read_text())["ranks"][0]["threads"] for p in OK_POINTS]
    assert threads == [1, 2]

    failed = json.loads((workdir / FAILED_POINT / "record.json").read_text())
    assert failed["status"] == "failed"
    assert "exceeded its time limit of 3 s" in failed["failure"]["reason"]

    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert list(points["vps"]) == [1, 2]
    assert (points["status"] == "ok").all() and points["valid"].all()
    assert (points["num_synapses"] == points["expected_synapses"]).all()
    assert points["job_wall_s"].notna().all()  # Snakemake's benchmark, the second timing source
    assert points.loc[0, "efficiency"] == pytest.approx(1.0)
    ranks = pd.read_csv(workdir / "results/tiny/ranks.csv")
    assert len(ranks) == 2 and set(ranks["rank"]) == {0}

    timeout = pd.read_csv(workdir / "results/tiny-timeout/points.csv")
    assert list(timeout["status"]) == ["failed"] and not timeout["valid"].any()
    assert "time limit" in timeout.loc[0, "failure_reason"]
    everything = pd.read_csv(workdir / "results/points.csv")
    assert sorted(everything["experiment"]) == ["tiny", "tiny", "tiny-timeout"]

    for experiment in ("tiny", "tiny-timeout"):
        for name in figures.FIGURES:
            for ext in ("png", "pdf"):
                path = workdir / f"results/{experiment}/figures/{name}.{ext}"
                assert path.stat().st_size > 1000, path
    assert (workdir / "logs/execute/tiny/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log").exists()


def test_second_run_recomputes_nothing(finished):
    workdir, configfile, _ = finished
    proc = snakemake(workdir, "--configfile", configfile, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_rerun_one_point_recomputes_only_it_and_the_tables(finished):
    workdir, configfile, _ = finished
    records = mtimes(workdir, "results/**/record.json")
    tables = mtimes(workdir, "results/tiny/points.csv")
    other_table = mtimes(workdir, "results/tiny-timeout/points.csv")
    target = f"{OK_POINTS[1]}/record.json"
    snakemake(workdir, "--configfile", configfile, "--forcerun", target)
    after = mtimes(workdir, "results/**/record.json")
    assert after[target] > records[target]
    assert {k: v for k, v in after.items() if k != target} == {k: v for k, v in records.items() if k != target}
    assert mtimes(workdir, "results/tiny/points.csv")["results/tiny/points.csv"] > tables["results/tiny/points.csv"]
    assert mtimes(workdir, "results/tiny-timeout/points.csv") == other_table


def test_rerun_failed_points(finished):
    workdir, configfile, _ = finished
    failed = [str(p.relative_to(workdir)) for p in failed_records(workdir / "results")]
    assert failed == [f"{FAILED_POINT}/record.json"]
    records = mtimes(workdir, "results/**/record.json")
    snakemake(workdir, "--configfile", configfile, "--forcerun", *failed)
    after = mtimes(workdir, "results/**/record.json")
    assert [k for k in after if after[k] != records[k]] == failed


def test_config_error_stops_before_any_job(workflow_copy):
    bad = {"experiments": [dict(CONFIG["experiments"][0], scaling="fast")]}
    proc = snakemake(workflow_copy, "--configfile", write_config(workflow_copy, bad), check=False)
    assert proc.returncode != 0
    assert "'fast' is not one of ['strong', 'weak']" in proc.stderr
    assert "['experiments'][0]['scaling']" in proc.stderr
    assert list((workflow_copy / "results").iterdir()) == []


def test_duplicate_names_stop_before_any_job(workflow_copy):
    bad = {"experiments": [CONFIG["experiments"][0], CONFIG["experiments"][0]]}
    proc = snakemake(workflow_copy, "--configfile", write_config(workflow_copy, bad), check=False)
    assert proc.returncode != 0 and "experiments[].name must be unique; repeated: tiny" in proc.stderr
    assert list((workflow_copy / "results").iterdir()) == []


def test_interrupted_workflow_resumes(workflow_copy):
    slow = dict(CONFIG["experiments"][0], name="slow", resources={"threads_per_rank": [1]})
    slow["pd14"] = dict(slow["pd14"], t_sim_ms=10_000)
    configfile = write_config(workflow_copy, {"experiments": [slow]})
    point = workflow_copy / "results/slow/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    log = workflow_copy / "logs/execute/slow/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log"
    proc = subprocess.Popen(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", configfile],
        cwd=workflow_copy,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, like a shell's foreground job
    )
    deadline = time.time() + 120
    while not (log.exists() and "running:" in log.read_text()) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside the simulation
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    assert proc.wait(timeout=120) != 0
    time.sleep(2.0)
    assert not (point / "record.json").exists()  # an interrupted point is not a result
    assert "status" not in log.read_text()  # and its simulation was stopped, not left running

    snakemake(workflow_copy, "--configfile", configfile)
    assert json.loads((point / "record.json").read_text())["status"] == "ok"


def test_report_holds_every_figure(finished):
    workdir, configfile, _ = finished
    snakemake(workdir, "--configfile", configfile, "--report", "results/report.html")
    html = (workdir / "results/report.html").read_text()
    for figure in figures.FIGURES.values():
        assert figure.caption.split(";")[0] in html
