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
from snnbench.results import archive, dashboard, dashboard_pages, gate, history, steps
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
    current = gate.current_points(pd.read_csv("results/history/points.csv"), root / "x.csv")
    assert set(gate.reference(past, current, last=5)["run"]) == {past["run"].iloc[0]}
    assert gate.reference(past, current, last=5)["record_sha"].isin(current["record_sha"]).sum() == 0
    assert gate.reference(past, current, since="2026-01-15").empty  # only run2 after that date: itself
    monkeypatch.chdir(root / "run1")  # the same points' paths with other records: the table's own folder wins
    table = root / "run2" / "results" / "history" / "points.csv"
    assert list(gate.current_points(pd.read_csv(table), table)["record_sha"]) == list(current["record_sha"])
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


def test_a_series_is_keyed_by_the_machine_name_and_its_hardware(tmp_path, capsys):
    """One machine name, two hardware digests (a kernel update keeps the digest, twice the CPUs change it): two
    series, so the slower runs on the other hardware are neither a step nor a slowdown of the first hardware's."""
    store = tmp_path / "store"
    runs = [("a", 2, "6.1", 1.0), ("b", 2, "6.12", 1.0), ("c", 4, "6.12", 1.5), ("d", 4, "6.12", 1.5)]
    for seed, (commit, cpus, kernel, slow) in enumerate(runs, start=1):
        run = write_run(tmp_path / commit, seed=seed, slow=slow, commit=commit * 40, started=f"2026-0{seed}-01")
        with_hardware(run, cpus, kernel)
        if commit != "d":  # d: the current run, gated below
            history.add(tmp_path / commit, store)
    past = history.read(store)
    assert "hardware" in history.SERIES_KEYS and "hardware" not in history.ALONG
    by_run = past.groupby("git_commit")["hardware"].agg(set)
    assert by_run["a" * 40] == by_run["b" * 40] != by_run["c" * 40]  # a kernel: the same hardware; CPUs: another
    assert past["series"].nunique() == 4  # 2 shapes x 2 hardware digests of one machine name
    assert past.groupby("series")["hardware"].nunique().eq(1).all()
    assert steps.all_steps(past, ["time_simulate_s", "cpu_simulate_s"]).empty  # x1.5 on other hardware: no step
    table = tmp_path / "d" / "results" / "history" / "points.csv"
    current = gate.current_points(pd.read_csv(table), table)
    assert set(current["series"]) == set(past.loc[past["git_commit"] == "c" * 40, "series"])  # d finds c's series
    assert gate.main([str(table), "--history", str(store)]) == 0  # c, not a or b, is d's reference: no slowdown
    assert "none slower" in capsys.readouterr().out
    others = dashboard_pages.other_hardware(past)
    for series, points in past.groupby("series"):
        (other,) = others[series].itertuples()  # the same shape on the other hardware
        assert other.hardware != points["hardware"].iloc[0] and other.points == (past["series"] == other.series).sum()
        page = dashboard.series_page(points, pd.DataFrame(columns=["metric", "axis"]), others[series])
        assert "<h2>Hardware</h2>" in page and f"href='{other.series}.html'" in page
        assert f"(hardware {points['hardware'].iloc[0][:8]})" in page  # in the title: which hardware this is
