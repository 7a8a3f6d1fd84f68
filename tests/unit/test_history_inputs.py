"""The history's commands on what they cannot use: a source with no finished points, a missing or empty history,
a damaged table (named in one line, set aside by add, left out by show and the dashboard, the gate refusing to
judge), and two adds at once into one history (serialized: no point added twice)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pandas as pd
import pytest
from snnbench import paths
from snnbench.results import dashboard, gate, history
from test_history import write_run
from test_history_place import one_line


def test_a_source_without_finished_points_is_named_in_one_line(tmp_path, capsys):
    (tmp_path / "fresh" / "results").mkdir(parents=True)
    write_run(tmp_path / "run", seed=1)
    experiment = tmp_path / "run" / "results" / "history"  # one experiment's folder: no */points.csv below it
    unrecorded = tmp_path / "copy" / "results" / "history"  # a table whose points' records are not beside it
    unrecorded.mkdir(parents=True)
    (unrecorded / "points.csv").write_bytes((experiment / "points.csv").read_bytes())
    for source in (tmp_path / "fresh" / "results", experiment, tmp_path / "copy"):
        assert history.main(["add", str(source), "--history", str(tmp_path / "store")]) == 2
        line = one_line(capsys.readouterr().err)
        assert line.startswith(f"{source}: no finished points found") and "points.csv" in line
    assert not (tmp_path / "store").exists()  # nothing made for nothing


@pytest.mark.parametrize("made", [False, True])
def test_the_dashboard_of_a_missing_or_empty_history_says_so_and_writes_nothing(tmp_path, capsys, made):
    store = tmp_path / "store"
    if made:
        (store / "machine").mkdir(parents=True)  # a folder with no run table
    assert dashboard.main(["--history", str(store), "--out", str(tmp_path / "site")]) == 2
    assert one_line(capsys.readouterr().err) == f"no history at {store} (make history-add first)"
    assert not (tmp_path / "site").exists()


@pytest.fixture
def damaged(tmp_path):
    """A history of two runs, the second run's table cut short (a full disk, a killed copy)."""
    store = tmp_path / "store"
    for seed, started in ((1, "2026-01-01"), (2, "2026-02-01")):
        write_run(tmp_path / f"run{seed}", seed=seed, started=started)
        history.add(tmp_path / f"run{seed}", store)
    cut = next(p for p in store.glob("*/*.parquet") if pd.read_parquet(p)["started_utc"].iloc[0] >= "2026-02")
    cut.write_bytes(cut.read_bytes()[:300])
    return tmp_path, store, cut


def test_a_damaged_table_is_named_and_the_rest_is_used(damaged, capsys, monkeypatch):
    root, store, cut = damaged
    assert history.main(["show", "--history", str(store)]) == 0
    out, err = capsys.readouterr()
    assert str(cut) in one_line(err) and "damaged" in err and f"{store}: 6 points" in out  # run1's 6 points
    assert dashboard.main(["--history", str(store), "--out", str(root / "site")]) == 0
    assert str(cut) in one_line(capsys.readouterr().err) and (root / "site" / "index.html").is_file()
    monkeypatch.chdir(root / "run2")
    assert gate.main(["results/history/points.csv", "--history", str(store)]) == 2  # never 1, "slower"
    assert str(cut) in one_line(capsys.readouterr().err)


def test_add_sets_a_damaged_table_aside_and_goes_on(damaged, capsys):
    root, store, cut = damaged
    assert history.main(["add", str(root / "run2"), "--history", str(store)]) == 0
    out, err = capsys.readouterr()
    assert str(cut) in one_line(err) and f"set aside as {cut.name}.damaged" in err
    assert cut.with_name(cut.name + ".damaged").is_file()  # kept, not deleted
    assert len(history.read(store)) == 12  # run2's points added again from its source
    assert history.main(["show", "--history", str(store)]) == 0 and capsys.readouterr().err == ""


# Both processes import first, then start adding at the same moment (START_S after being started).
RACE = (
    "import sys, time; from snnbench.results import history; "
    "time.sleep(max(0.0, float(sys.argv[1]) - time.time())); sys.exit(history.main(sys.argv[2:]))"
)
START_S = 2.5


def test_two_adds_at_once_add_each_point_once(tmp_path):
    write_run(tmp_path / "run", seed=1)
    table = tmp_path / "run" / "results" / "history" / "points.csv"
    part = table.with_name("part.csv")  # half the run's points: a source overlapping the whole run
    pd.read_csv(table).head(3).to_csv(part, index=False)
    env = paths.scripts_on_path(dict(os.environ))
    for trial in range(4):
        store = tmp_path / f"store{trial}"
        start = str(time.time() + START_S)
        adds = [
            subprocess.Popen(
                [sys.executable, "-c", RACE, start, "add", str(source), "--history", str(store)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for source in (tmp_path / "run", part)
        ]
        for add in adds:
            out, err = add.communicate(timeout=60)
            assert add.returncode == 0, err
        points = history.read(store)
        assert len(points) == 6 and points["record_sha"].is_unique, f"trial {trial}: {len(points)} points"
