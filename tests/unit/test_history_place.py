"""Where the results history lives: the command line over the config's `history.folder` over $SNNBENCH_HISTORY over
the per-user folder; a wrong `history` block refused before anything is read or added, naming the file, the key
and what is allowed, by the history's commands and by the workflow alike; a place that is a file, or that cannot be
made, named in one line with what named it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import experiment
from snnbench import planning
from snnbench.results import dashboard, gate, history, history_place
from test_history import write_run


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A working directory whose config/config.yaml names no history, without $SNNBENCH_HISTORY, with its own
    per-user data folder."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("regression:\n  baseline: ''\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(history_place.HISTORY_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def config_file(path, block) -> str:
    path.write_text(yaml.safe_dump({"history": block}))
    return str(path)


def test_the_command_line_the_config_the_variable_then_the_per_user_folder(checkout, monkeypatch):
    assert history_place.root_of(None) == checkout / "data" / "snnbench" / "history"
    monkeypatch.setenv(history_place.HISTORY_VARIABLE, str(checkout / "from-variable"))
    assert history_place.root_of("default") == checkout / "from-variable"
    config_file(checkout / "config" / "config.yaml", {"folder": "from-config"})
    assert history_place.root_of(None) == history_place.root_of("default") == Path("from-config")
    later = config_file(checkout / "later.yaml", {"folder": "~/from-later"})
    assert history_place.root_of("default", [later]) == Path("~/from-later").expanduser()  # the last file wins
    unset = config_file(checkout / "unset.yaml", {"folder": ""})
    assert history_place.root_of(None, [later, unset]) == Path("~/from-later").expanduser()  # '' sets nothing
    assert history_place.root_of(str(checkout / "named"), [later]) == checkout / "named"  # the command line first


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"folder": 3}, "history.folder: 3 is not of type 'string' (expected string)"),
        ({"folder": ["a", "b"]}, "history.folder: ['a', 'b'] is not of type 'string' (expected string)"),
        ({"fodler": "x"}, "history: Additional properties are not allowed ('fodler' was unexpected) (allowed keys:"),
        ("shared", "history: 'shared' is not of type 'object' (expected object)"),
    ],
)
def test_a_wrong_history_block_is_refused_naming_the_file_and_the_key(checkout, capsys, block, message):
    bad = config_file(checkout / "bad.yaml", block)
    with pytest.raises(planning.ConfigRefused) as refused:
        history_place.root_of(str(checkout / "named"), [bad])  # refused even where the command line names the folder
    assert str(refused.value).startswith("Error in config (bad.yaml):") and message in str(refused.value)
    current = checkout / "results" / "points.csv"
    for command in (
        lambda: history.main(["add", str(checkout / "results"), "--configfile", bad]),
        lambda: dashboard.main(["--out", str(checkout / "site"), "--configfile", bad]),
        lambda: gate.main([str(current), "--history", "default", "--configfile", bad]),
    ):
        assert command() == 2
        assert message in capsys.readouterr().err
    assert not (checkout / "data").exists() and not (checkout / "site").exists()  # nothing read, nothing written


def test_the_workflow_refuses_a_wrong_history_block_before_any_job():
    config = {"experiments": [experiment()], "history": {"folder": 3}}
    with pytest.raises(planning.ConfigRefused, match=r"history.folder: 3 is not of type 'string'"):
        planning.plan(config, ["mine.yaml"])
    config = {"experiments": [experiment()]}
    planning.plan(config)
    assert config["history"] == {"folder": ""}  # the schema's default: not set in the config


def test_a_config_file_that_is_missing_or_not_yaml_is_refused(checkout):
    with pytest.raises(planning.ConfigRefused, match="missing.yaml: no such config file"):
        history_place.root_of(None, [str(checkout / "missing.yaml")])
    (checkout / "broken.yaml").write_text("history: [\n")
    with pytest.raises(planning.ConfigRefused, match="broken.yaml, line .*: not valid YAML"):
        history_place.root_of(None, [str(checkout / "broken.yaml")])


def one_line(err: str) -> str:
    """The one line a refused command prints (no traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("named_by", ["--history", "history.folder", history_place.HISTORY_VARIABLE])
def test_a_history_folder_that_is_a_file_is_refused_in_one_line(checkout, monkeypatch, capsys, named_by):
    afile = checkout / "afile"
    afile.write_text("not a folder\n")
    write_run(checkout / "run", seed=1)
    place = ["--history", str(afile)] if named_by == "--history" else []
    if named_by == "history.folder":
        config_file(checkout / "config" / "config.yaml", {"folder": str(afile)})
    if named_by == history_place.HISTORY_VARIABLE:
        monkeypatch.setenv(history_place.HISTORY_VARIABLE, str(afile))
    for command in (
        lambda: history.main(["add", str(checkout / "run"), *place]),
        lambda: history.main(["show", *place]),
        lambda: dashboard.main(["--out", str(checkout / "site"), *place]),
        lambda: gate.main([str(checkout / "points.csv"), *place]),
    ):
        assert command() == 2
        line = one_line(capsys.readouterr().err)
        assert str(afile) in line and "is a file, not a folder" in line and named_by in line
    assert afile.read_text() == "not a folder\n" and not (checkout / "site").exists()


@pytest.mark.parametrize("where", ["/proc/snnbench-history", "afile/history"])
def test_a_history_that_cannot_be_made_is_named_in_one_line(checkout, capsys, where):
    (checkout / "afile").write_text("")
    write_run(checkout / "run", seed=1)
    assert history.main(["add", str(checkout / "run"), "--history", where]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"history folder {where} (--history): cannot be made or written")
