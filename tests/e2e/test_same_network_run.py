"""One network, every simulator, through the real workflow: NEST exports one PD14 network
(pd14.network_seed, rule describe_network), NEST, PyNN on NEST, brian2-cpp and genn-cpu read it; with DC input
(nothing random after construction) they emit NEST's spikes, as README.md claims: every one of NEST's spikes
within one step and no other, paired one to one, in the first 100 ms and over the whole second, and every
population's rate within 1 % of NEST's over 1 s (issue 35's goal).
genn-cpu runs NEST's exact integration (genn.neuron_model: iaf_psc_exp) in double precision; GeNN's own
LIF does not reach the goal, and in single precision the spikes agree for the first 100 ms, then part
(docs/same-network.md).

N = 0.005 with full in-degrees (K = 1): 385 neurons, 1 494 402 synapses, every population firing
with DC input. Needs .venv-brian2 and .venv-pygenn; skipped with the reason where one is missing.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import copy_workflow, snakemake
from snnbench import environments
from snnbench.network.judging import same_network

SIZE = {"neuron_scale": 0.005, "indegree_scale": 1.0}
NETWORK = "networks/pd14/N0.005_K1_seed1"
READERS = ["pynn-nest", "brian2-cpp", "genn-cpu"]

needs_environments = pytest.mark.skipif(
    not (environments.is_linked("brian2") and environments.is_linked("pygenn")),
    reason=".venv-brian2 or .venv-pygenn is not installed (make env-brian2 env-pygenn)",
)


@pytest.fixture(scope="module")
def workflow_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("same-network"))
    config = {
        "experiments": [
            {
                "name": "same",
                "simulators": ["nest", *READERS],
                "scaling": "strong",
                "resources": {"threads_per_rank": [1]},
                "pd14": {**SIZE, "network_seed": 1, "input": "dc", "t_presim_ms": 0, "t_sim_ms": 1000},
                "genn": {"neuron_model": "iaf_psc_exp", "precision": "double"},
                "seeds": [1],
            }
        ],
        "figures": {"experiment": {"same_network": ["spike_match", "rate_difference_by_population"]}},
    }
    (workdir / "config" / "same.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "--configfile", "config/same.yaml", timeout_s=2400)
    return workdir


@pytest.mark.slow
@needs_environments
def test_every_simulator_reads_the_network_nest_exported_once(workflow_run):
    description = json.loads((workflow_run / NETWORK / "description.json").read_text())
    with np.load(workflow_run / NETWORK / "network.npz") as network:
        assert network["source"].size == description["totals"]["synapses"] == 1494402
        assert network["v0_mV"].size == description["totals"]["neurons"] == 385
    for simulator in ["nest", *READERS]:
        rec = json.loads(
            (workflow_run / f"results/same/{simulator}/nodes1_ranks1_threads1/N0.005_K1/seed1/record.json").read_text()
        )
        assert rec["status"] == "ok", rec.get("failure")
        assert rec["network"]["num_synapses"] == 1494402
        identity = rec["model_results"]["network"]
        assert identity["description"] == "N0.005_K1_seed1" and identity["sha256"] == description["sha256"]
    points = pd.read_csv(workflow_run / "results/same/points.csv")
    assert (points["network_description"] == "N0.005_K1_seed1").all() and (points["network_seed"] == 1).all()


@pytest.mark.slow
@needs_environments
def test_with_dc_input_the_simulators_emit_nests_spikes(workflow_run):
    points = pd.read_csv(workflow_run / "results/same/points.csv").set_index("simulator")
    assert points["valid"].all(), points["failure"] if "failure" in points else points
    for simulator in ["nest", *READERS]:
        point = points.loc[simulator]
        # Both ways (NEST's spikes it emits, its spikes NEST emits), the first 100 ms and the whole second.
        shares = point[list(same_network.SHARES)].to_dict()
        assert all(share == 1.0 for share in shares.values()), (simulator, shares)
        assert point["rate_difference_max_rel"] <= 0.01, (simulator, point["rate_difference_max_rel"])
    assert points.loc["genn-cpu", "neuron_model"] == "iaf_psc_exp" and points.loc["genn-cpu", "precision"] == "double"
    figure = workflow_run / "results/same/figures/same_network.png"
    assert figure.stat().st_size > 1000
