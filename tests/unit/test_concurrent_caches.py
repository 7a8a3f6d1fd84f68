"""Caches shared by checkouts, used at the same moment (issue 54): two checkouts that make one environment
at once make it once, and an environment whose maker was killed halfway is never taken as made. Downloads of
one source at once: tests/unit/test_sources.py. Adds into one history at once: test_history_inputs.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from snnbench import environments
from snnbench.environments import builds, maker

pytestmark = pytest.mark.slow  # pip into new environments (seconds each)

MAKE = """
import sys
from pathlib import Path
from snnbench.environments import maker
maker.make(maker.named_build("probe"), ["probe"], Path(sys.argv[1]))
"""


@pytest.fixture
def probe(tmp_path, monkeypatch) -> dict:
    """A named environment `probe` (one small pin) in a folder of its own, and a fresh environment cache."""
    folder = tmp_path / "envs"
    folder.mkdir()
    (folder / "probe.yaml").write_text("dependencies:\n  - python=3.11\n  - pip\n  - pip:\n      - pyyaml==6.0.3\n")
    monkeypatch.setenv(environments.EXTRA_VARIABLE, str(folder))
    monkeypatch.setenv("SNNBENCH_ENV_CACHE", str(tmp_path / "cache"))
    return maker.named_build("probe")


def start(log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", MAKE, str(log)], stderr=subprocess.PIPE, text=True)


def test_two_checkouts_making_one_environment_at_once_make_it_once(probe, tmp_path):
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    makers = [start(log) for log in logs]
    for made in makers:
        assert made.wait(300) == 0, made.stderr.read()[-2000:]
    said = [log.read_text() for log in logs]
    assert sum("made in" in text for text in said) == 1 and sum("already in the cache" in text for text in said) == 1
    assert sorted(p.name for p in builds.directory(probe).parent.iterdir()) == [probe["key"], f"{probe['key']}.lock"]
    python = builds.directory(probe) / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import yaml"]).returncode == 0


def test_an_environment_whose_maker_was_killed_halfway_is_made_again(probe, tmp_path):
    killed = start(tmp_path / "killed.log")
    prefix, deadline = builds.directory(probe), time.monotonic() + 120
    while not (prefix / "bin" / "python").exists() and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.05)  # until the venv exists and pip is about to fill it
    os.kill(killed.pid, signal.SIGKILL)
    assert killed.wait() == -signal.SIGKILL
    # Half-made: no marker (rule build_environment's output), so neither Snakemake nor a point takes it as made.
    assert prefix.exists() and not environments.made_marker(probe["key"]).exists()
    again = start(tmp_path / "again.log")
    assert again.wait(300) == 0, again.stderr.read()[-2000:]
    assert "made in" in (tmp_path / "again.log").read_text() and builds.marker(probe).exists()
    assert subprocess.run([str(prefix / "bin" / "python"), "-c", "import yaml"]).returncode == 0
