"""The lines a run ends with (snnbench.tables.summary): per experiment its points ok, failed and invalid from
its points.csv, `disturbed` only where the table has that column, and where its table and figures are; and the
handlers a run's end goes to (snnbench.planning.after_run.ended)."""

from __future__ import annotations

import csv

from snnbench.tables import summary


def write_table(folder, rows, columns=("status", "valid")):
    folder.mkdir(parents=True)
    with open(folder / "points.csv", "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["experiment", *columns])
        writer.writeheader()
        writer.writerows({"experiment": folder.name, **row} for row in rows)


def test_points_are_counted_by_status_and_validity(tmp_path):
    rows = [
        {"status": "ok", "valid": "true"},
        {"status": "ok", "valid": "False"},  # pandas' spelling of older tables
        {"status": "ok", "valid": ""},  # not judged: ok, not invalid
        {"status": "failed", "valid": ""},
        {"status": "skipped", "valid": ""},
    ]
    write_table(tmp_path / "exp", rows)
    (tmp_path / "exp" / "figures").mkdir()
    found = summary.counts(tmp_path / "exp" / "points.csv")
    assert (found["points"], found["ok"], found["invalid"], found["failed"], found["skipped"]) == (5, 3, 1, 1, 1)
    assert "disturbed" not in found
    line = summary.experiment_line("exp", str(tmp_path))
    assert line == f"  exp: 5 points: 3 ok (1 invalid), 1 failed, 1 skipped -> {tmp_path}/exp/ (points.csv, figures/)"


def test_disturbed_is_counted_only_where_the_table_has_the_column(tmp_path):
    rows = [{"status": "ok", "valid": "true", "disturbed": d} for d in ("true", "false", "")]
    columns = ("status", "valid", "disturbed")
    write_table(tmp_path / "exp", rows, columns)
    write_table(tmp_path / "calm", [{"status": "ok", "valid": "true", "disturbed": "false"}], columns)
    assert summary.experiment_line("exp", str(tmp_path)).endswith(
        f"3 points: 3 ok (0 invalid), 0 failed, 1 disturbed -> {tmp_path}/exp/ (points.csv)"
    )
    assert "1 point: 1 ok (0 invalid), 0 failed, 0 disturbed" in summary.experiment_line("calm", str(tmp_path))


def test_a_run_with_disturbed_points_says_what_disturbed_means_and_one_without_does_not(tmp_path):
    columns = ("status", "valid", "disturbed")
    write_table(tmp_path / "busy", [{"status": "ok", "valid": "true", "disturbed": "true"}], columns)
    write_table(tmp_path / "calm", [{"status": "ok", "valid": "true", "disturbed": "false"}], columns)
    assert summary.lines(["calm", "busy"], str(tmp_path))[-1] == summary.DISTURBED
    assert "--profile profiles/local" in summary.DISTURBED
    assert summary.DISTURBED not in summary.lines(["calm", "missing"], str(tmp_path))


def test_an_experiment_without_a_table_or_with_an_unreadable_one_is_named_not_fatal(tmp_path):
    assert "no table yet" in summary.experiment_line("missing", str(tmp_path))
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "points.csv").write_bytes(b"status\n\xff\xfe\n")
    assert "cannot be read" in summary.experiment_line("binary", str(tmp_path))


def test_many_experiments_stay_a_few_lines(tmp_path):
    names = [f"e{i}" for i in range(20)]
    for name in names:
        write_table(tmp_path / name, [{"status": "ok", "valid": "true"}])
    out = summary.lines(names, str(tmp_path))
    assert len(out) == 1 + summary.SHOWN + 1 and out[-1].startswith("  and 12 more experiments")
    assert summary.lines([], str(tmp_path)) == []


def test_a_run_end_goes_to_the_handlers_the_workflow_registered(monkeypatch):
    """What a Snakefile that uses snnbench as a module calls from its own onsuccess and onerror (docs/deploy.md)."""
    from snnbench.planning import after_run

    called = []
    monkeypatch.setattr(
        after_run, "HANDLERS", {"succeeded": lambda: called.append("ok"), "failed": lambda: called.append("no")}
    )
    after_run.ended(succeeded=True)
    after_run.ended(succeeded=False)
    assert called == ["ok", "no"]
