"""End to end: a network model kept outside the package (tests/models/two_populations.py) runs
through the real workflow on NEST once it is registered by SNNBENCH_NETWORK_MODELS: records with
the model's own size, tables, validation and figures, with no change to snnbench."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import VENV_BIN, copy_workflow, per_population, plugin_environment

pytestmark = pytest.mark.slow

BLOCK = {"neuron_scale": 0.5, "indegree_scale": 0.5, "t_presim_ms": 50.0, "t_sim_ms": 200.0}
CONFIG = {
    "experiments": [
        {
            "name": "seam",
            "model": "two_populations",
            "simulators": ["nest"],
            "scaling": "strong",
            "resources": {"threads_per_rank": [1, 2]},
            "two_populations": BLOCK,
            "seeds": [1],
        }
    ]
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("seam"))
    (workdir / "config" / "seam.yaml").write_text(yaml.safe_dump(CONFIG))
    env = plugin_environment(
        workdir, "models", SNNBENCH_NETWORK_MODELS="two_populations=two_populations:TwoPopulations"
    )
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", "config/seam.yaml"],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return workdir


def test_the_registered_model_runs_with_its_own_size_and_populations(finished):
    records = sorted(finished.glob("results/seam/nest/*/*/seed1/record.json"))
    assert len(records) == 2
    for path in records:
        rec = json.loads(path.read_text())
        assert rec["status"] == "ok", rec.get("error")
        assert rec["point"]["model_name"] == "two_populations"
        # 500 neurons with 40 + 10 inputs each: the model's formula, counted in NEST.
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] == 500 * 50
        assert set(per_population(rec, "rate_hz")) == {"E", "I"}


def test_tables_and_figures_of_the_registered_model(finished):
    points = pd.read_csv(finished / "results" / "seam" / "points.csv")
    assert set(points["model_name"]) == {"two_populations"} and len(points) == 2
    assert (points["status"] == "ok").all()
    # judged at collect, where the model is registered (the workflow's environment, not this process)
    assert points["activity_checked"].all() and points["activity_plausible"].all(), points["activity_problems"]
    assert list(finished.glob("results/seam/figures/*.png")), "no figures"
