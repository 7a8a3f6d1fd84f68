"""Tables after a run whose jobs did not all finish (snnbench.tables.onerror, Snakemake's onerror)."""

import json
import os

import numpy as np
import pandas as pd
from conftest import BOUNDS
from snnbench.dev import synthetic
from snnbench.tables import onerror

TOLERANCE = {"ks_alpha": 0.001, "ks_margin": {"rate": 0.03, "cv_isi": 0.03, "correlation": 0.06}}


def _experiment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exp = synthetic.experiment(name="lost", threads=(1, 2), seeds=(1,))
    paths = synthetic.write_experiment(tmp_path, exp, with_stats=False)
    return [str(path.parent.relative_to(tmp_path)) for path in paths["records"]]


def test_a_point_ended_by_slurm_shows_as_failed_in_the_tables(tmp_path, monkeypatch):
    points = _experiment(tmp_path, monkeypatch)
    # What a job SLURM ended leaves: a failed record, no Snakemake benchmark, nothing downstream.
    ended = points[1]
    spec = json.loads((tmp_path / ended / "spec.json").read_text())
    record = synthetic.make_record(spec, np.random.default_rng(0), status="failed")
    record["failure"] = {"reason": "terminated by SIGTERM from SLURM (job state NODE_FAIL: a node of the job was lost)"}
    (tmp_path / ended / "record.json").write_text(json.dumps(record))
    (tmp_path / ended / "validation.json").unlink()
    os.remove(ended.replace("results/", "benchmarks/execute/", 1) + ".tsv")

    lines = list(onerror.write_tables({"lost": points}, BOUNDS, TOLERANCE))

    assert len(lines) == 1 and "results/lost/points.csv" in lines[0] and "1 failed point(s)" in lines[0], lines
    table = pd.read_csv("results/lost/points.csv")
    assert sorted(table["status"]) == ["failed", "ok"]
    assert "NODE_FAIL" in table.loc[table["status"] == "failed", "failure_reason"].item()
    assert os.path.exists("results/lost/ranks.csv") and os.path.exists("results/lost/validation.csv")
    # Up to date now: a second call leaves it alone.
    assert list(onerror.write_tables({"lost": points}, BOUNDS, TOLERANCE)) == []


def test_interim_tables_read_a_shared_ensembles_records_as_collect_does(tmp_path, monkeypatch):
    """brian2-cpp judged by nest's seeds of another experiment (a shared ensemble): its rate agreement
    with nest is filled from their records, and their rows stay out of its table."""
    monkeypatch.chdir(tmp_path)
    kept = synthetic.experiment(name="ensemble-pd14-0123456789", threads=(1,), seeds=(1, 2, 3))
    members = synthetic.write_experiment(tmp_path, kept, with_stats=False, seed=1)
    lost = synthetic.experiment(name="lost", simulators=("brian2-cpp",), threads=(1,), seeds=(1, 2, 3))
    points = [str(p.parent.relative_to(tmp_path)) for p in synthetic.write_experiment(tmp_path, lost)["records"]]
    context = [str(p.relative_to(tmp_path)) for key in ("records", "validations") for p in members[key]]

    lines = list(onerror.write_tables({"lost": points}, BOUNDS, TOLERANCE, {"lost": [*context, "results/gone.json"]}))

    assert len(lines) == 1 and "results/lost/points.csv" in lines[0], lines
    table = pd.read_csv("results/lost/points.csv")
    assert set(table["simulator"]) == {"brian2-cpp"} and table["rates_agree_with_nest"].notna().all()


def test_an_experiment_with_a_point_without_record_gets_no_tables(tmp_path, monkeypatch):
    points = _experiment(tmp_path, monkeypatch)
    os.remove(f"{points[0]}/record.json")  # e.g. the job's first node was lost: nothing wrote a record

    lines = list(onerror.write_tables({"lost": points}, BOUNDS, TOLERANCE))

    assert lines == [f"tables of lost not written: 1 point(s) have no record, e.g. {points[0]}/record.json"]
    assert not os.path.exists("results/lost/points.csv")


def test_a_job_that_died_before_its_point_ran_gets_a_failed_record_from_its_slurm_log(tmp_path, monkeypatch):
    points = _experiment(tmp_path, monkeypatch)
    dead = points[1]
    os.remove(f"{dead}/record.json")
    spec = json.loads((tmp_path / dead / "spec.json").read_text())
    folder = tmp_path / onerror.SLURM_LOGS / "rule_execute_point_pd14" / onerror.slurm_log_folder(dead)
    folder.mkdir(parents=True)
    (folder / "41.log").write_text("old attempt\n")
    os.utime(folder / "41.log", (1, 1))
    (folder / "42.log").write_text("".join(f"line {i}\n" for i in range(30)) + "module: command not found\n")

    lines = list(onerror.record_dead_jobs({path: None for path in points[:1]} | {dead: spec}))

    assert len(lines) == 1 and lines[0].startswith(f"{dead}/record.json: its job ended before the point ran")
    rec = json.loads((tmp_path / dead / "record.json").read_text())
    assert rec["status"] == "failed" and rec["wall_time_s"] is None and rec["point"] == spec
    reason = rec["failure"]["reason"]
    assert f"{onerror.SLURM_LOGS}/rule_execute_point_pd14/{folder.name}/42.log" in reason
    assert reason.endswith("line 29\nmodule: command not found") and "line 10\n" not in reason
    assert list(onerror.record_dead_jobs({dead: spec})) == []  # it has a record now
