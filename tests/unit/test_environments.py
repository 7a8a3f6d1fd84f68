"""Named environments (envs/<name>.yaml): what defines one (its cache key), and how a checkout
finds its .venv-<name>. Pure: nothing is installed here (tests/e2e/test_environments.py links a
real one and plans the workflow's jobs)."""

from __future__ import annotations

import shutil
import sys

import pytest
from snnbench import environments, paths
from snnbench.environments import maker


@pytest.fixture
def envs(tmp_path, monkeypatch):
    """A copy of envs/ that a test may edit; keys are computed afresh."""
    folder = tmp_path / "envs"
    shutil.copytree(paths.ENVS, folder)
    monkeypatch.setattr(environments, "ENVS", folder)
    environments.key.cache_clear()
    yield folder
    environments.key.cache_clear()


def test_pins_split_like_make_installs_them():
    assert "norse==1.1.0" not in environments.pins("norse")
    assert environments.pins("norse", no_deps=True) == ["norse==1.1.0"]
    assert "torch==2.13.0" in environments.pins("norse")
    assert environments.python_version("brian2") == "3.13"


def test_the_key_follows_what_defines_the_environment(envs):
    before = environments.key("brian2")
    assert environments.key("brian2") == before and environments.key("tonic") != before
    text = (envs / "brian2.yaml").read_text()
    (envs / "brian2.yaml").write_text(text.replace("cython==3.2.4", "cython==3.2.5"))
    environments.key.cache_clear()
    assert environments.key("brian2") != before
    (envs / "brian2.yaml").write_text(text.replace("python=3.13", "python=3.12"))
    environments.key.cache_clear()
    assert environments.key("brian2") != before
    (envs / "brian2.yaml").write_text("# a comment that changes nothing installed\n" + text)
    environments.key.cache_clear()
    assert environments.key("brian2") == before


def test_the_key_holds_no_checkout_path_and_the_install_script():
    defined = environments.definition("nest-mpi")
    assert str(paths.REPO) not in repr(defined)
    assert defined["script"] == "scripts/snnbench/environments/nest_mpi.py" and len(defined["script_sha256"]) == 16
    assert environments.definition("brian2")["script"] is None


def test_an_environment_file_without_python_is_named(envs):
    (envs / "brian2.yaml").write_text("dependencies:\n  - pip:\n      - brian2==2.11.0\n")
    with pytest.raises(environments.EnvironmentMissing, match=r"envs/brian2.yaml names no Python"):
        environments.definition("brian2")


def test_a_checkout_uses_its_link_only_for_todays_key(tmp_path, monkeypatch):
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    assert environments.python("nest") == sys.executable  # the main environments are the running one
    with pytest.raises(environments.EnvironmentMissing, match=r"rule link_environment\), or run `make env-brian2`"):
        environments.python("brian2", tmp_path)
    venv = environments.linked("brian2", tmp_path)
    venv.mkdir()
    environments.link_marker("brian2", tmp_path).write_text("0123456789abcdef\n")  # an older envs file's
    with pytest.raises(environments.EnvironmentMissing):
        environments.python("brian2", tmp_path)
    environments.link_marker("brian2", tmp_path).write_text(environments.key("brian2") + "\n")
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(environments.EnvironmentMissing, match=r"which is gone from the environment cache"):
        environments.python("brian2", tmp_path)
    made = tmp_path / "cache" / environments.key("brian2") / "build.json"
    made.parent.mkdir(parents=True)
    made.write_text("{}")
    assert environments.python("brian2", tmp_path) == str(venv / "bin" / "python")


def test_python_of_another_version_is_found_or_named():
    major_minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    found = maker.find_python(major_minor)
    assert shutil.which(found) or found.endswith(f"python{major_minor}")
    with pytest.raises(maker.BuildFailed, match=r"Python 2.1 is not installed"):
        maker.find_python("2.1")


def test_make_env_names_an_unknown_environment(capsys):
    assert maker.main(["brain2"]) == 2
    assert "no environment brain2 (envs/<name>.yaml): known are brian2, brian2cuda" in capsys.readouterr().err


def test_a_plugins_environment_file_is_found_in_the_folders_of_the_variable(tmp_path, monkeypatch):
    folder = tmp_path / "plugin-envs"
    folder.mkdir()
    (folder / "plugin-only.yaml").write_text("dependencies:\n  - python=3.11\n  - pip:\n      - numpy==2.4.6\n")
    (folder / "brian2.yaml").write_text("dependencies:\n  - python=3.11\n")  # envs/ comes first
    assert "no file plugin-only.yaml in envs" in environments.problem("plugin-only")
    monkeypatch.setenv(environments.EXTRA_VARIABLE, f"{tmp_path / 'nowhere'}:{folder}")
    assert environments.file("plugin-only") == folder / "plugin-only.yaml"
    assert environments.file("brian2") == paths.ENVS / "brian2.yaml"
    assert environments.problem("plugin-only") is None
    assert environments.pins("plugin-only") == ["numpy==2.4.6"] and environments.python_version("plugin-only") == "3.11"
    (folder / "no-python.yaml").write_text("dependencies:\n  - pip:\n      - numpy==2.4.6\n")
    assert (
        environments.problem("no-python") == f"{folder}/no-python.yaml names no Python version (a line `- python=3.11`)"
    )
