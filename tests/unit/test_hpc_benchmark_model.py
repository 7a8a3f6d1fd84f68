"""hpc_benchmark's arithmetic against the figures its sources give, and its config block."""

from __future__ import annotations

import pytest
from conftest import config_problems, experiment, validated
from snnbench.network.models import hpc_benchmark as hpc


def block_experiment(**block) -> dict:
    exp = experiment(model="hpc_benchmark", hpc_benchmark={"neuron_scale": 0.1, "indegree_scale": 0.1, **block})
    exp.pop("pd14")
    return exp


def test_weights_and_drive_are_the_examples():
    full = hpc.derive(1.0, 1.0)
    assert full.weight_exc_pA == pytest.approx(45.61, abs=0.01)  # 0.14 mV as an alpha current
    assert full.weight_inh_pA == pytest.approx(-5 * full.weight_exc_pA)
    assert full.external_rate_hz == pytest.approx(20_856, rel=1e-3)  # eta x threshold rate x 9 000


def test_sizes_follow_the_formulas():
    net = hpc.derive(2.0, 0.1)
    assert net.num_neurons.tolist() == [18_000, 4_500] and net.indegree.tolist() == [900, 225]
    assert net.total_synapses == 22_500 * 1_125
    size = hpc.HpcBenchmark().size({"neuron_scale": 2.0, "indegree_scale": 0.1})
    assert size.total_neurons == 22_500 and size.total_synapses == net.total_synapses


def test_down_scaled_indegrees_keep_the_mean_input():
    full, tenth = hpc.derive(1.0, 1.0), hpc.derive(1.0, 0.1)
    assert tenth.indegree[0] * tenth.weight_exc_pA == pytest.approx(full.indegree[0] * full.weight_exc_pA)
    assert tenth.external_rate_hz * tenth.weight_exc_pA == pytest.approx(full.external_rate_hz * full.weight_exc_pA)


def test_the_block_gets_its_defaults_and_is_checked():
    block = validated(block_experiment())["experiments"][0]["hpc_benchmark"]
    assert block["t_presim_ms"] == 100.0 and block["t_sim_ms"] == 1000.0 and block["input"] == "poisson"
    assert config_problems(block_experiment(J=1))[0].startswith("experiments[0].hpc_benchmark: Additional")
    assert any("indegree_scale" in line for line in config_problems(block_experiment(indegree_scale=2)))


def test_weights_that_did_not_move_make_the_activity_implausible():
    model, params = hpc.HpcBenchmark(), {"neuron_scale": 0.1, "indegree_scale": 1.0, "t_sim_ms": 1000.0}
    initial = hpc.derive(0.1, 1.0).weight_exc_pA
    still = {"ee_weights_pA": {"count": 10, "mean": initial, "sd": 0.0, "initial": initial}}
    rows = [{"spikes": 1_000, "neurons": 1_000}]
    assert model.activity_problems(params, rows, still) == ["E->E weights did not move: plasticity did not act"]
    fast = [{"spikes": 20_000, "neurons": 1_000}]
    assert "hpc_benchmark's regime" in model.activity_problems(params, fast, {})[0]
    assert model.activity_problems({**params, "indegree_scale": 0.1}, fast, {}) == []
