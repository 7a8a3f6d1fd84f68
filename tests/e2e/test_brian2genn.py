"""Brian2GeNN in GeNN's CPU-only mode through the real workflow, on one network NEST exported
(pd14.network_seed) with DC input, beside NEST and brian2-cpp running Brian2GeNN's binned delays.
GeNN 4.9 comes from the brian2genn environment's own build (envs/brian2genn.yaml), nothing set by hand.

Brian2GeNN has one delay per Synapses object, so it cannot emit NEST's spikes; the bound its binned
delays allow is what cpp_standalone emits with the same bins (docs/same-network.md: the same 6 673
spikes at N = 0.01). The test asserts that bound spike by spike, and every population's rate against
NEST's within it. One Brian2GeNN point: each compiles its whole model for minutes (14-18 min at 4 bins under
the suite's load on 2026-11-26). Its own file: the slowest fixture of the suite gets a pytest-xdist
worker of its own."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import yaml
from conftest import copy_workflow, snakemake
from snnbench import environments
from snnbench.network import models
from snnbench.network.judging import rate_agreement, same_network, spike_match
from snnbench.tables.frames import read_points

# Every population fires with DC input at N = 0.005 and full in-degrees (385 neurons, 1 494 402 synapses).
SIZE = {"neuron_scale": 0.005, "indegree_scale": 1.0}
POINT = "nodes1_ranks1_threads1/N0.005_K1/seed1"


@pytest.fixture(scope="module")
def genn_beside_nest(tmp_path_factory):
    if not environments.is_linked("brian2genn"):
        pytest.skip(".venv-brian2genn is not installed (make env-brian2genn)")
    workdir = copy_workflow(tmp_path_factory.mktemp("genn-e2e"))
    config = {
        "experiments": [
            {
                "name": "genn",
                # brian2-cpp runs Brian2GeNN's binned delays (brian2.bin_delays): the bound; NEST the reference.
                "simulators": ["nest", "brian2-genn-cpu", "brian2-cpp"],
                # Two delay bins (the default is 4): GeNN compiles the model's Synapses objects in one
                # compiler call per point, which fewer objects shorten.
                "brian2": {"bin_delays": True, "delay_bins": 2},
                "scaling": "strong",
                "resources": {"threads_per_rank": [1]},
                "pd14": {**SIZE, "network_seed": 1, "input": "dc", "t_presim_ms": 0, "t_sim_ms": 500},
                "seeds": [1],
                "time_limit_min": 30,
            }
        ]
    }
    (workdir / "config" / "genn.yaml").write_text(yaml.safe_dump(config))
    env = {key: value for key, value in os.environ.items() if key != "GENN_PATH"}
    snakemake(workdir, "--configfile", "config/genn.yaml", timeout_s=3600, env=env)
    return workdir


@pytest.mark.slow
def test_brian2genn_cpu_emits_binned_cpp_standalones_spikes_on_nests_network(genn_beside_nest, monkeypatch):
    monkeypatch.chdir(genn_beside_nest)  # points.csv names each point's folder relative to the workflow
    points = read_points(genn_beside_nest / "results/genn/points.csv").set_index("simulator")
    assert (points["status"] == "ok").all() and len(points) == 3, points.get("failure")
    genn, cpp = points.loc["brian2-genn-cpu"], points.loc["brian2-cpp"]
    assert genn["num_synapses"] == points.loc["nest", "num_synapses"] == 1494402
    # The bound: Brian2GeNN emits what cpp_standalone emits with the same binned delays.
    dt_ms, window_start_ms = models.get(genn["model_name"]).dt_ms, float(genn["t_presim_ms"])
    found = spike_match.match_fractions(same_network.spikes(cpp), same_network.spikes(genn), dt_ms, window_start_ms)
    assert found["reference_spikes_early"] > 0
    assert min(found["spike_match_early"], found["spike_match_run"], found["spike_match_other_run"]) >= 0.99, found
    # Against NEST: every population's rate within the bound binning allows, measured in this run by binned
    # cpp_standalone (its distance from NEST's rate), plus 1 % of NEST's rate.
    rates = rate_agreement.rate_columns(points.reset_index())
    nest, genn_rates, cpp_rates = (
        points.loc[s, rates].astype(float) for s in ("nest", "brian2-genn-cpu", "brian2-cpp")
    )
    bound = (cpp_rates - nest).abs() + 0.01 * nest
    assert ((genn_rates - nest).abs() <= bound).all(), pd.DataFrame({"nest": nest, "genn": genn_rates, "bound": bound})
    assert genn[["spike_match_early", "spike_match_run", "rate_difference_max_rel"]].notna().all()


@pytest.mark.slow
def test_the_brian2genn_record_names_genn_and_its_delay_bins(genn_beside_nest):
    rec = json.loads((genn_beside_nest / f"results/genn/brian2-genn-cpu/{POINT}/record.json").read_text())
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
    assert rec["model_results"]["network"]["description"] == "N0.005_K1_seed1"
