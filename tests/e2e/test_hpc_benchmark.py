"""End to end: NEST's hpc_benchmark through the real workflow, weak scaling over 1 and 2 virtual
processes at a small size (1 125 neurons per VP at a tenth of the in-degrees: smaller networks
fire in synchronous bursts, which the activity check refuses): NEST creates the synapses the
formula gives, the sampled E->E weights moved (plasticity acted), the activity passes the
config's bounds and the model's asynchrony check (its < 10 spikes/s holds for its full in-degrees
only), and the tables and figures are made (the weak-scaling panels and the E->E weight
distribution)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from conftest import assert_plausible, copy_workflow, per_population, snakemake
from snnbench.network.models import hpc_benchmark as hpc

pytestmark = pytest.mark.slow

BLOCK = {"neuron_scale_per_vp": 0.1, "indegree_scale": 0.1, "t_presim_ms": 100.0, "t_sim_ms": 500.0}
CONFIG = {
    "experiments": [
        {
            "name": "hpc",
            "model": "hpc_benchmark",
            "simulators": ["nest"],
            "scaling": "weak",
            "resources": {"threads_per_rank": [1, 2]},
            "hpc_benchmark": BLOCK,
            "seeds": [1],
        }
    ]
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("hpc"))
    (workdir / "config" / "hpc.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(workdir, "--configfile", "config/hpc.yaml")
    return workdir


def records(workdir) -> dict[int, dict]:
    found = {}
    for path in workdir.glob("results/hpc/nest/*/*/seed1/record.json"):
        rec = json.loads(path.read_text())
        found[rec["point"]["resources"]["virtual_processes"]] = rec
    return found


def test_the_network_grows_with_the_vps_and_has_the_formulas_synapses(finished):
    recs = records(finished)
    assert sorted(recs) == [1, 2]
    for vps, rec in recs.items():
        assert rec["status"] == "ok", rec.get("failure")
        net = hpc.derive(BLOCK["neuron_scale_per_vp"] * vps, BLOCK["indegree_scale"])
        assert rec["network"]["num_neurons"] == int(net.num_neurons.sum())
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] == net.total_synapses


def test_plasticity_acted_and_rates_are_in_the_models_regime(finished):
    for rec in records(finished).values():
        weights = rec["model_results"]["ee_weights_pA"]
        net = hpc.derive(BLOCK["neuron_scale_per_vp"], BLOCK["indegree_scale"])  # the sample: 100 E targets
        assert weights["count"] == hpc.WEIGHT_SAMPLE_TARGETS * net.indegree[0]
        assert weights["sd"] > 0 and weights["mean"] != pytest.approx(weights["initial"])
        assert_plausible(rec)
        assert all(rate > 0 for rate in per_population(rec, "rate_hz").values())


def test_weak_scaling_tables_and_figures(finished):
    points = pd.read_csv(finished / "results" / "hpc" / "points.csv")
    assert set(points["model_name"]) == {"hpc_benchmark"} and (points["status"] == "ok").all()
    assert sorted(points["vps"]) == [1, 2]
    figures = finished / "results" / "hpc" / "figures"
    assert (figures / "scaling.png").exists() and (figures / "weights.png").exists()
    assert points["ee_weights_moved_fraction"].gt(0.5).all() and points["ee_weight_histogram"].notna().all()
