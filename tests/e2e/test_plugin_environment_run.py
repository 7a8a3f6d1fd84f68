"""End to end: a simulator kept outside the package with an environment of its own runs a PD14 point through the
real workflow. tests/simulators/poisson_plugin.py (a numpy-only Poisson stand-in) is registered by
SNNBENCH_NETWORK_SIMULATORS and its environment file, tests/simulators/envs/poisson-pd14.yaml, is found through
SNNBENCH_ENVIRONMENTS: the workflow makes that environment (cached per user, linked as .venv-poisson-pd14) and the
point runs in it. Adding the simulator took three files: its backend module (with its registry entry), the
variable that registers it, and its environment file; nothing in snnbench. A missing environment file is refused
in one line before any job."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, plugin_environment, snakemake
from snnbench import environments

pytestmark = pytest.mark.slow

CONFIG = {
    "experiments": [
        {
            "name": "own-environment",
            "simulators": ["poisson-pd14"],
            "scaling": "strong",
            "resources": {"threads_per_rank": [1]},
            "pd14": dict(TINY["pd14"]),
            "seeds": [1],
        }
    ]
}
REGISTERED = "poisson-pd14=poisson_plugin:SIMULATOR"


def registered_environment(workdir, environments_folder=None) -> dict:
    folder = environments_folder or workdir / "tests" / "simulators" / "envs"
    return plugin_environment(
        workdir, "simulators", SNNBENCH_NETWORK_SIMULATORS=REGISTERED, SNNBENCH_ENVIRONMENTS=str(folder)
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("own-environment"))
    (workdir / "config" / "plugin.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(workdir, "--configfile", "config/plugin.yaml", env=registered_environment(workdir))
    return workdir


def test_the_point_ran_in_the_plugins_own_environment(finished, monkeypatch):
    (path,) = finished.glob("results/own-environment/poisson-pd14/*/*/seed1/record.json")
    rec = json.loads(path.read_text())
    assert rec["status"] == "ok", rec.get("failure")
    assert rec["point"]["simulator"] == "poisson-pd14"
    monkeypatch.setenv(environments.EXTRA_VARIABLE, str(finished / "tests" / "simulators" / "envs"))
    environments.key.cache_clear()
    assert rec["provenance"]["identity"]["environment_key"] == environments.key("poisson-pd14")
    assert rec["simulator"]["executable"] == str(environments.linked("poisson-pd14") / "bin" / "python")
    assert rec["simulator"]["python"].startswith("3.11.")  # the environment file's Python, not .venv's
    assert any(module.endswith("poisson_plugin.py") for module in rec["provenance"]["identity"]["modules"])


def test_the_table_shows_its_detailed_timer_and_activity(finished):
    points = pd.read_csv(finished / "results" / "own-environment" / "points.csv")
    (row,) = points.itertuples()
    assert row.status == "ok" and row.valid and row.num_synapses == 0  # Poisson trains pass the activity check
    assert row.simulate_detail_draw_s > 0  # its registry entry's detailed timer
    assert row.rate_L4E_hz > 0


def test_a_missing_environment_file_is_refused_in_one_line_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    (workdir / "config" / "plugin.yaml").write_text(yaml.safe_dump(CONFIG))
    env = registered_environment(workdir, environments_folder=tmp_path / "nowhere")
    proc = snakemake(workdir, "--configfile", "config/plugin.yaml", "-n", check=False, env=env)
    assert proc.returncode != 0
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "poisson-pd14.yaml" in line]
    assert lines and "experiments[0] (own-environment): simulator poisson-pd14: environment 'poisson-pd14'" in lines[0]
