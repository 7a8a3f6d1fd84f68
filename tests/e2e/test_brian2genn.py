"""Brian2GeNN in GeNN's CPU-only mode beside NEST, through the real workflow (three seeds): GeNN 4.9
comes from the brian2genn environment's own build (envs/brian2genn.yaml), nothing set by hand.
The record names GeNN and its backends, the synapses are all there after delay binning, and the
rates agree with NEST's by the project's rule. Its own file: the slowest fixture of the suite runs on
a pytest-xdist worker of its own, beside test_brian2.py's cpp_standalone run."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import yaml
from conftest import copy_workflow, snakemake
from snnbench import environments

# Tiny PD14 with a window long enough to compare rates with NEST's over three seeds.
POINT = {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 100, "t_sim_ms": 500}
SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def genn_beside_nest(tmp_path_factory):
    """Brian2GeNN (GeNN's CPU-only mode) beside NEST through the workflow: GeNN 4.9 comes from the
    environment's own build (envs/brian2genn.yaml), nothing set by hand."""
    if not environments.is_linked("brian2genn"):
        pytest.skip(".venv-brian2genn is not installed (make env-brian2genn)")
    workdir = copy_workflow(tmp_path_factory.mktemp("genn-e2e"))
    config = {
        "experiments": [
            {
                "name": "genn",
                "simulators": ["nest", "brian2-genn-cpu"],
                "scaling": "strong",
                "resources": {"threads_per_rank": [1]},
                "pd14": POINT,
                "seeds": SEEDS,
                "time_limit_min": 30,
            }
        ]
    }
    (workdir / "config" / "genn.yaml").write_text(yaml.safe_dump(config))
    env = {key: value for key, value in os.environ.items() if key != "GENN_PATH"}
    snakemake(workdir, "--configfile", "config/genn.yaml", timeout_s=3600, env=env)
    return workdir


@pytest.mark.slow
def test_brian2genn_cpu_beside_nest_through_the_workflow(genn_beside_nest):
    points = pd.read_csv(genn_beside_nest / "results/genn/points.csv")
    assert (points["status"] == "ok").all() and len(points) == 2 * len(SEEDS)
    genn = points[points["simulator"] == "brian2-genn-cpu"]
    assert (genn["num_synapses"] == genn["expected_synapses"]).all()
    assert genn["rates_agree_with_nest"].all(), genn[[c for c in points if c.startswith("rate_")]]
    rec = json.loads(next(genn_beside_nest.glob("results/genn/brian2-genn-cpu/*/*/seed1/record.json")).read_text())
    assert rec["simulator"]["device"] == "genn" and rec["phases_s"]["simulate"] > 0
    genn = rec["simulator"]["genn"]
    assert genn["from"] == "the environment's build" and genn["version"].startswith("4.9")
    assert "single_threaded_cpu_backend" in genn["backends"]
    sim = rec["simulator"]
    assert not sim["gpu"] and sim["build"]["binary_reused"] is False  # Brian2GeNN always rebuilds (make clean)
    # Delay binning (Brian2GeNN: one delay per Synapses object): at most delay_bins objects per projection,
    # some projection split, no synapse lost.
    projections, bins = sim["delay_binning"], sim["delay_bins"]
    assert len(projections) < sim["synapse_objects"] <= bins * len(projections)
    assert all(1 <= len(p["bins"]) <= bins and p["mean_abs_error_steps"] >= 0 for p in projections)
    assert sum(b["synapses"] for p in projections for b in p["bins"]) == rec["network"]["num_synapses"]
    assert rec["phases_s"]["presimulate"] > 0 and rec["activity"]["checked"]
