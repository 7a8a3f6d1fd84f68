"""Where the results history lives: the command line over the config's `history.folder` over $SNNBENCH_HISTORY over
the per-user folder; a wrong `history` block refused before anything is read or added, naming the file, the key
and what is allowed, by the history's commands and by the workflow alike."""

from __future__ import annotations

import pytest
import yaml
from conftest import experiment
from snnbench import planning
from snnbench.results import dashboard, gate, history


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A working directory whose config/config.yaml names no history, without $SNNBENCH_HISTORY, with its own
    per-user data folder."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text("regression:\n  baseline: ''\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(history.HISTORY_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def config_file(path, block) -> str:
    path.write_text(yaml.safe_dump({"history": block}))
    return str(path)


def test_the_command_line_the_config_the_variable_then_the_per_user_folder(checkout, monkeypatch):
    assert history.root_of(None) == checkout / "data" / "snnbench" / "history"
    monkeypatch.setenv(history.HISTORY_VARIABLE, str(checkout / "from-variable"))
    assert history.root_of("default") == checkout / "from-variable"
    config_file(checkout / "config" / "config.yaml", {"folder": "from-config"})
    assert history.root_of(None) == history.root_of("default") == history.Path("from-config")
    later = config_file(checkout / "later.yaml", {"folder": "~/from-later"})
    assert history.root_of("default", [later]) == history.Path("~/from-later").expanduser()  # the last file wins
    unset = config_file(checkout / "unset.yaml", {"folder": ""})
    assert history.root_of(None, [later, unset]) == history.Path("~/from-later").expanduser()  # '' sets nothing
    assert history.root_of(str(checkout / "named"), [later]) == checkout / "named"  # the command line first


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
        history.root_of(str(checkout / "named"), [bad])  # refused even where the command line names the folder
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
        history.root_of(None, [str(checkout / "missing.yaml")])
    (checkout / "broken.yaml").write_text("history: [\n")
    with pytest.raises(planning.ConfigRefused, match="broken.yaml, line .*: not valid YAML"):
        history.root_of(None, [str(checkout / "broken.yaml")])
