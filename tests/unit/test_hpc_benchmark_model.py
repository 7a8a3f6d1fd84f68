"""hpc_benchmark's arithmetic against the figures its sources give, and its config block."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import config_problems, experiment, validated
from snnbench.dev import hpc_weak
from snnbench.network import activity
from snnbench.network.models import hpc_benchmark as hpc
from snnbench.network.models import pd14
from snnbench.network.simulators.brian2.pd14 import MEMBRANE, membrane_constants
from snnbench.network.simulators.nest.pd14 import neuron_params


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


def test_fixed_indegree_draws_the_in_degree_without_autapses():
    from snnbench.network.simulators.brian2.hpc_benchmark import fixed_indegree

    rng = np.random.default_rng(1)
    i, j = fixed_indegree(rng, 50, 50, 120, same=True)
    assert np.bincount(j).tolist() == [120] * 50  # the in-degree of every target
    assert not (i == j).any() and i.min() >= 0 and i.max() == 49
    assert len(set(zip(i.tolist(), j.tolist(), strict=True))) < i.size  # multapses allowed
    i, j = fixed_indegree(rng, 10, 30, 5, same=False)
    assert i.max() < 10 and np.bincount(j).tolist() == [5] * 30


def test_rank_weight_summaries_merge_into_the_distribution():
    initial = 100.0
    a = hpc.weight_summary(np.array([100.0, 90.0, 110.0]), initial)
    b = hpc.weight_summary(np.array([100.0, 250.0]), initial)  # 2.5 x lands in the last bin
    merged = hpc.merge_weights([a, b], initial)
    values = np.array([100.0, 90.0, 110.0, 100.0, 250.0])
    assert merged["count"] == 5 and merged["mean"] == pytest.approx(values.mean())
    assert merged["sd"] == pytest.approx(values.std()) and merged["moved_fraction"] == pytest.approx(3 / 5)
    counts = np.array(merged["histogram_relative"]["counts"])
    assert counts.sum() == 5 and counts[-1] == 1 and len(merged["histogram_relative"]["edges"]) == counts.size + 1
    columns = hpc.HpcBenchmark().table_columns({"ee_weights_pA": merged})
    assert columns["ee_weights_moved_fraction"] == pytest.approx(0.6)
    assert sum(json.loads(columns["ee_weight_histogram"])["counts"]) == 5


def test_synchronous_firing_makes_the_activity_implausible():
    model, params = hpc.HpcBenchmark(), {"neuron_scale": 0.1, "indegree_scale": 0.1, "t_sim_ms": 1000.0}
    rows = [{"population": "E", "spikes": 100, "neurons": 10, "correlation": 0.5}]
    assert model.activity_problems(params, rows, {}) == ["E synchronous: spike-count correlation 0.50 > 0.2"]
    assert model.activity_problems(params, [{**rows[0], "correlation": 0.05}], {}) == []


def test_population_stats_measure_synchrony():
    rng = np.random.default_rng(0)
    # 20 neurons firing in common 2 ms bins (synchronous) and 20 firing independently.
    together = np.repeat(np.sort(rng.choice(np.arange(0, 1000, 2.0), 50, replace=False)), 20) + 0.5
    senders = np.concatenate([np.tile(np.arange(20), 50), 20 + rng.integers(0, 20, 1000)])
    times = np.concatenate([together, rng.uniform(0, 1000, 1000)])
    stats = activity.population_stats(senders, times, [0, 20], [20, 20], 1000.0, ("S", "A"))
    assert stats[0]["correlation"] > 0.9 and abs(stats[1]["correlation"]) < 0.05


def test_the_weight_figure_is_the_models_and_draws_the_histograms(tmp_path):
    from snnbench import families, figures

    family = families.of_experiment({"model": "hpc_benchmark"})
    assert family.figures({"figures": {"experiment": {"time": ["phases"]}}}) == {
        "time": ["phases"],
        "weights": ["ee_weight_distribution"],
    }
    initial = 100.0
    rows = []
    for simulator, spread in (("nest", 5.0), ("brian2-cpp", 8.0)):
        merged = hpc.merge_weights(
            [hpc.weight_summary(np.random.default_rng(1).normal(100, spread, 500), initial)], 100
        )
        row = {"simulator": simulator, "model_name": "hpc_benchmark", "valid": True, "neuron_scale": 0.2}
        rows.append({**row, "shape": "1x1x1"})
        rows[-1].update(hpc.HpcBenchmark().table_columns({"ee_weights_pA": merged}))
    points = pd.DataFrame(rows)
    assert figures.plasticity.summed_histogram(points["ee_weight_histogram"], hpc.WEIGHT_BINS_RELATIVE).sum() == 1000
    fig = figures.draw(["ee_weight_distribution"], figures.PanelData(points), png=str(tmp_path / "w.png"))
    assert (tmp_path / "w.png").stat().st_size > 0
    assert len(fig.axes[0].patches) == 2  # one histogram per series


def test_nest_gets_every_neuron_parameter_of_both_models_by_its_nest_name():
    alpha = neuron_params(hpc.NEURON)
    assert alpha["tau_syn_ex"] == alpha["tau_syn_in"] == hpc.NEURON["tau_syn_ms"]
    assert alpha["tau_minus"] == hpc.NEURON["tau_minus_ms"] and alpha["V_th"] == hpc.NEURON["V_th_mV"]
    assert neuron_params(pd14.NEURON)["E_L"] == pd14.NEURON["E_L_mV"] and "tau_minus" not in neuron_params(pd14.NEURON)
    with pytest.raises(KeyError, match="a_new_parameter"):
        neuron_params({**hpc.NEURON, "a_new_parameter": 1.0})


def test_the_weak_scaling_summary_takes_medians_over_seeds_of_valid_points_only():
    rows = [
        {
            "vps": vps,
            "seed": seed,
            "valid": valid,
            "time_create_s": 1.0,
            "time_connect_s": 2.0 * vps,
            "time_simulate_s": sim,
            "real_time_factor": sim,
            "peak_rss_mb_sum": 100.0 * vps,
            "correlation_E": 0.05,
            "correlation_I": 0.1,
            "path": f"p{vps}{seed}",
            "status": "ok",
        }
        for vps, seed, sim, valid in [
            (1, 1, 10.0, True),
            (1, 2, 12.0, True),
            (1, 3, 99.0, False),
            (2, 1, 15.0, True),
            (2, 2, 13.0, True),
            (2, 3, 14.0, True),
        ]
    ]
    table = hpc_weak.medians(pd.DataFrame(rows))
    assert list(table.index) == [1, 2] and list(table["seeds"]) == [2, 3]
    assert list(table["simulate s"]) == [11.0, 14.0] and list(table["construction s"]) == [3.0, 5.0]
    assert table["efficiency"].tolist() == pytest.approx([1.0, 11.0 / 14.0])
    assert list(table["max corr"]) == [0.1, 0.1]


def test_brian2_gets_the_membrane_constants_of_both_models_in_their_units():
    units = SimpleNamespace(mV=1e-3, ms=1e-3, pF=1e-12)
    alpha = membrane_constants(units, hpc.NEURON)
    assert set(alpha) == set(MEMBRANE) and alpha["tau_syn"] == pytest.approx(hpc.NEURON["tau_syn_ms"] * 1e-3)
    assert membrane_constants(units, pd14.NEURON)["C_m"] == pytest.approx(pd14.NEURON["C_m_pF"] * 1e-12)
    with pytest.raises(KeyError, match="V_th"):
        membrane_constants(units, {k: v for k, v in hpc.NEURON.items() if k != "V_th_mV"})


def test_nest_takes_the_hpc_synapses_while_every_threads_nodes_fit_their_index():
    from snnbench.network.simulators.nest.hpc_benchmark import synapse_variant

    assert synapse_variant(11_250, 1) == "_hpc" and synapse_variant(65_250, 1) == "_hpc"  # the example at 5.8
    assert synapse_variant(67_500, 1) == "" and synapse_variant(135_000, 2) == ""  # the large preset
    assert synapse_variant(135_000, 4) == "_hpc"
    rank = {"ee_weights": hpc.weight_summary(np.array([1.0, 2.0]), 1.0), "nest_synapse_models": ["static_synapse"]}
    results = hpc.HpcBenchmark().results({"neuron_scale": 1.0, "indegree_scale": 0.1}, [rank, rank])
    assert hpc.HpcBenchmark().table_columns(results)["nest_synapse_models"] == "static_synapse"
