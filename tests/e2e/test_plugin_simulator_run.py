"""End to end: a simulator kept outside the package (tests/simulators/nest_plugin.py) runs PD14 through
the real workflow once SNNBENCH_NETWORK_SIMULATORS registers it: the schema accepts its name, its
points run in its environment with its builder, and tables and figures show it beside NEST. Adding
a simulator took its backend module, its registry entry and its environment file; nothing in snnbench."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import TINY, VENV_BIN, copy_workflow, plugin_environment

pytestmark = pytest.mark.slow

CONFIG = {
    "experiments": [
        {
            "name": "plugin",
            "simulators": ["nest", "nest-plugin"],
            "scaling": "strong",
            "resources": {"threads_per_rank": [1]},
            "pd14": dict(TINY["pd14"]),
            "seeds": [1],
        }
    ]
}
REGISTERED = "nest-plugin=nest_plugin:SIMULATOR"


def registered_environment(workdir) -> dict:
    return plugin_environment(workdir, "simulators", SNNBENCH_NETWORK_SIMULATORS=REGISTERED)


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("plugin"))
    (workdir / "config" / "plugin.yaml").write_text(yaml.safe_dump(CONFIG))
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", "config/plugin.yaml"],
        cwd=workdir,
        env=registered_environment(workdir),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return workdir


def test_the_registered_simulator_runs_pd14_with_its_own_builder(finished):
    (path,) = finished.glob("results/plugin/nest-plugin/*/*/seed1/record.json")
    rec = json.loads(path.read_text())
    assert rec["status"] == "ok", rec.get("failure")
    assert rec["point"]["simulator"] == "nest-plugin"
    assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"]


def test_tables_show_the_plugin_beside_nest_with_the_same_network(finished):
    points = pd.read_csv(finished / "results" / "plugin" / "points.csv").set_index("simulator")
    assert sorted(points.index) == ["nest", "nest-plugin"] and (points["status"] == "ok").all()
    assert points.loc["nest-plugin", "num_synapses"] == points.loc["nest", "num_synapses"]  # same seed, same NEST
    assert list(finished.glob("results/plugin/figures/simulators.png"))


def test_without_the_registration_the_name_is_refused_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    (workdir / "config" / "plugin.yaml").write_text(yaml.safe_dump(CONFIG))
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", "config/plugin.yaml", "-n"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "experiments[0].simulators[1]: 'nest-plugin' is not" in proc.stdout + proc.stderr
