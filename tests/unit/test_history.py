"""The results history: every point of a run added once per record, one file per machine and run, records kept
compressed; results folders and archives added alike; the gate compares a run with its series' recent history.
Runs here are synthetic records (snnbench.dev.synthetic) collected by the real collect."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest
from conftest import BOUNDS
from snnbench.dev import synthetic
from snnbench.results import archive, dashboard, dashboard_pages, gate, history
from snnbench.tables import collect
from snnbench.tables.frames import write_table
from test_figures import TOLERANCE

EXPERIMENT = synthetic.experiment(name="history", threads=(1, 2), seeds=(1, 2, 3))


def write_run(folder, seed: int, slow: float = 1.0, commit: str = "a" * 40, started: str = "2026-01-01") -> dict:
    """A run's results folder (records and its experiment's points.csv) under folder/results."""
    paths = synthetic.write_experiment(folder, EXPERIMENT, seed=seed, slow=slow)
    for path in paths["records"]:  # each run its commit and date, as real runs have
        rec = json.loads(path.read_text())
        rec["provenance"]["workflow"]["git_commit"] = commit
        rec["provenance"]["started_utc"] = f"{started}T00:00:00+00:00"
        path.write_text(json.dumps(rec))
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    write_table(points, folder / "results" / "history" / "points.csv")
    return paths


def test_a_run_is_added_once_per_machine_with_its_records(tmp_path):
    write_run(tmp_path / "run", seed=1)
    store = tmp_path / "store"
    (table,) = history.add(tmp_path / "run" / "results", store)
    past = history.read(store)
    assert len(past) == 6 and past["series"].nunique() == 2  # 2 shapes x 3 seeds
    assert table.parent.name == past["machine"].iloc[0] and table.suffix == ".parquet"
    assert history.add(tmp_path / "run", store) == []  # the checkout or its results/: the same points
    assert len(history.read(store)) == 6 and len(list(store.glob("*/*.parquet"))) == 1
    kept = json.loads(gzip.decompress((store / past["record_file"].iloc[0]).read_bytes()))
    assert kept["point"]["path"] == past["path"].iloc[0]
    assert set(past[history.SERIES_KEYS].columns) <= set(past) and past["seed"].isin(["1", "2", "3"]).all()


def test_runs_of_several_commits_continue_their_series(tmp_path):
    store = tmp_path / "store"
    write_run(tmp_path / "old", seed=1, commit="a" * 40, started="2026-01-01")
    write_run(tmp_path / "new", seed=2, commit="b" * 40, started="2026-02-01")
    history.add(tmp_path / "old", store)
    history.add(tmp_path / "new", store)
    past = history.read(store)
    assert len(past) == 12 and past["series"].nunique() == 2  # commits are columns along a series, not keys
    assert past.groupby("series")["git_commit"].nunique().eq(2).all()
    assert sorted(p.name[:10] for p in store.glob("*/*.parquet")) == ["aaaaaaaaaa", "bbbbbbbbbb"]


def test_an_archive_is_added_like_its_results_folder(tmp_path, monkeypatch):
    paths = write_run(tmp_path / "run", seed=3)
    monkeypatch.chdir(tmp_path / "run")
    files = ["results/history/points.csv", *(p.relative_to(tmp_path / "run") for p in paths["records"])]
    archive.pack(tmp_path / "shared.tar.gz", "history", files, {})
    store = tmp_path / "store"
    assert len(history.add(tmp_path / "shared.tar.gz", store)) == 1
    assert history.add(tmp_path / "run" / "results", store) == []  # the same records, already there
    assert (history.read(store)["source"] == "archive shared.tar.gz").all()


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """A history of two runs; a third run as fast, and one 1.5 times slower."""
    root = tmp_path_factory.mktemp("gate")
    store = root / "store"
    for seed, started in ((1, "2026-01-01"), (2, "2026-02-01")):
        write_run(root / f"run{seed}", seed=seed, started=started)
        history.add(root / f"run{seed}", store)
    write_run(root / "same", seed=3, started="2026-03-01")
    write_run(root / "slow", seed=4, slow=1.5, started="2026-03-01")
    return root, store


def test_the_gate_passes_an_unchanged_run_and_fails_a_slower_one(gated, monkeypatch):
    root, store = gated
    monkeypatch.chdir(root / "same")
    assert gate.main(["results/history/points.csv", "--history", str(store)]) == 0
    monkeypatch.chdir(root / "slow")
    assert gate.main(["results/history/points.csv", "--history", str(store), "--out", "ratios.csv"]) == 1
    ratios = pd.read_csv(root / "slow" / "ratios.csv")
    assert ratios["slowdown"].all() and (ratios["ratio_time_simulate_s"] > 1.3).all()


def test_the_gate_leaves_out_the_current_records_and_chooses_its_reference(gated, monkeypatch):
    root, store = gated
    past = history.read(store)
    monkeypatch.chdir(root / "run2")  # a run already in the history is not its own reference
    current = history.normalised(pd.read_csv("results/history/points.csv"))
    current["record_sha"] = gate.record_digests(pd.read_csv("results/history/points.csv"), root / "x.csv")
    assert set(gate.reference(past, current, last=5)["run"]) == {past["run"].iloc[0]}
    assert gate.reference(past, current, last=5)["record_sha"].isin(current["record_sha"]).sum() == 0
    assert gate.reference(past, current, since="2026-01-15").empty  # only run2 after that date: itself
    monkeypatch.chdir(root / "run1")  # the same points' paths with other records: the table's own folder wins
    table = root / "run2" / "results" / "history" / "points.csv"
    assert gate.record_digests(pd.read_csv(table), table) == list(current["record_sha"])
    assert len(gate.reference(past, current, version="no such version")) == 0


def test_the_gate_without_a_history_says_so(tmp_path, capsys):
    assert gate.main([str(tmp_path / "points.csv"), "--history", str(tmp_path / "none")]) == 2
    assert "no history" in capsys.readouterr().err


def with_hardware(paths: dict, cpus: int, kernel: str) -> None:
    """Each record of a run gets its node's hardware record (as a real run leaves hardware/<host>.json beside it)."""
    for path in paths["records"]:
        rec = json.loads(path.read_text())
        rec["hardware"] = ["hardware/node1.json"]
        path.write_text(json.dumps(rec))
        facts = {"logical_cpus": cpus, "topology": f"Machine (24GB total)\n  Package L#0 {cpus} PU", "kernel": kernel}
        (path.parent / "hardware").mkdir(exist_ok=True)
        (path.parent / "hardware" / "node1.json").write_text(json.dumps({**facts, "memory": {"total_mb": 24000}}))


def test_the_hardware_record_is_a_column_along_the_series_and_its_changes_are_shown(tmp_path):
    store = tmp_path / "store"
    runs = [("a", 2, "6.1", "2026-01-01"), ("b", 2, "6.12", "2026-02-01"), ("c", 4, "6.12", "2026-03-01")]
    for seed, (commit, cpus, kernel, started) in enumerate(runs, start=1):
        with_hardware(write_run(tmp_path / commit, seed=seed, commit=commit * 40, started=started), cpus, kernel)
        history.add(tmp_path / commit, store)
    past = history.read(store)
    assert "hardware" not in history.SERIES_KEYS and "hardware" in history.ALONG
    assert len(past) == 18 and past["series"].nunique() == 2  # 2 shapes: neither a kernel nor the CPUs start one
    by_run = past.groupby("git_commit")["hardware"].agg(set)
    assert by_run[["a" * 40, "b" * 40]].map(len).eq(1).all() and by_run["a" * 40] == by_run["b" * 40]  # a kernel
    assert by_run["c" * 40] != by_run["a" * 40]  # twice the CPUs: another hardware, the same series
    assert len(list(store.glob("*/hardware/*.json.gz"))) == 2
    for _, points in past.groupby("series"):
        changes = dashboard_pages.hardware_changes(points)
        assert list(changes["commit"]) == ["c" * 40] and changes["date"].iloc[0].startswith("2026-03-01")
        assert list(changes["before"]) == list(by_run["a" * 40]) and list(changes["after"]) == list(by_run["c" * 40])
        page = dashboard.series_page(points, pd.DataFrame(columns=["metric", "axis"]))
        assert "<h2>Hardware changes</h2>" in page and page.count("<tr class='hw'>") == 1
        assert "hardware changed" in page  # the dotted line's label on the commit date plots
