"""Tables after a run whose jobs did not all finish (snnbench.unfinished, Snakemake's onerror)."""

import json
import os

import numpy as np
import pandas as pd
from conftest import BOUNDS
from snnbench import unfinished
from snnbench.dev import synthetic

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

    lines = list(unfinished.write_tables({"lost": points}, BOUNDS, TOLERANCE))

    assert len(lines) == 1 and "results/lost/points.csv" in lines[0] and "1 failed point(s)" in lines[0], lines
    table = pd.read_csv("results/lost/points.csv")
    assert sorted(table["status"]) == ["failed", "ok"]
    assert "NODE_FAIL" in table.loc[table["status"] == "failed", "failure_reason"].item()
    assert os.path.exists("results/lost/ranks.csv") and os.path.exists("results/lost/validation.csv")
    # Up to date now: a second call leaves it alone.
    assert list(unfinished.write_tables({"lost": points}, BOUNDS, TOLERANCE)) == []


def test_an_experiment_with_a_point_without_record_gets_no_tables(tmp_path, monkeypatch):
    points = _experiment(tmp_path, monkeypatch)
    os.remove(f"{points[0]}/record.json")  # e.g. the job's first node was lost: nothing wrote a record

    lines = list(unfinished.write_tables({"lost": points}, BOUNDS, TOLERANCE))

    assert lines == [f"tables of lost not written: 1 point(s) have no record, e.g. {points[0]}/record.json"]
    assert not os.path.exists("results/lost/points.csv")
