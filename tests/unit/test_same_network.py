"""One network, every simulator: the exported network's file, the spike match, the refusals and the
table's columns (snnbench.network.models.pd14_exported, spike_match, same_network)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import config_problems, experiment
from snnbench.network.judging import same_network, spike_match
from snnbench.network.models import pd14_exported


def test_a_spike_within_one_step_matches_and_two_steps_off_does_not():
    reference = (np.array([0, 1, 2, 3]), np.array([1.0, 2.0, 3.0, 150.0]))
    other = (np.array([0, 1, 2, 5]), np.array([1.1, 1.9, 3.2, 150.0]))
    reference_paired, other_paired = spike_match.pair(reference, other, 0.1)
    assert reference_paired.tolist() == [True, True, False, False]
    assert other_paired.tolist() == [True, True, False, False]
    found = spike_match.match_fractions(reference, other, 0.1, window_start_ms=0.0)
    assert found["spike_match_early"] == pytest.approx(2 / 3)
    assert found["spike_match_run"] == pytest.approx(0.5)
    assert found["reference_spikes_early"] == 3


def test_identical_runs_match_fully_and_another_neuron_never_matches():
    spikes = (np.array([4, 4, 9]), np.array([10.0, 30.0, 31.0]))
    assert spike_match.match_fractions(spikes, spikes, 0.1, 0.0)["spike_match_run"] == 1.0
    shifted = (spikes[0] + 1, spikes[1])
    assert spike_match.match_fractions(spikes, shifted, 0.1, 0.0)["spike_match_run"] == 0.0


def small_network() -> pd14_exported.ExportedNetwork:
    # Two populations of 2 and 3 neurons; synapses listed in no particular order.
    return pd14_exported.ExportedNetwork(
        num_neurons=np.array([2, 3]),
        v0_mV=np.array([-60.0, -61.0, -62.0, -63.0, -64.0]),
        source=np.array([4, 0, 2, 1], dtype=np.int32),
        target=np.array([0, 3, 1, 2], dtype=np.int32),
        weight_pA=np.array([-350.0, 87.8, -351.0, 88.0]),
        delay_ms=np.array([0.8, 1.5, 0.7, 2.2]),
    )


def test_the_export_is_read_back_by_projection_with_indices_within_the_populations(tmp_path):
    written = pd14_exported.write(tmp_path, small_network())
    assert written["file"] == "network.npz" and len(written["sha256"]) == 64
    network, _ = pd14_exported._read(tmp_path / "network.npz", 0, written["sha256"], tmp_path / "description.json")
    assert [v.tolist() for v in network.initial_potentials()] == [[-60.0, -61.0], [-62.0, -63.0, -64.0]]
    projections = {(p.target, p.source): p for p in network.projections(0.1)}
    assert sorted(projections) == [(0, 1), (1, 0)]
    inhibitory = projections[(0, 1)]  # from population 1 (neurons 2-4) to population 0
    assert sorted(zip(inhibitory.i.tolist(), inhibitory.j.tolist(), strict=True)) == [(0, 1), (2, 0)]
    excitatory = projections[(1, 0)]
    assert sorted(zip(excitatory.i.tolist(), excitatory.j.tolist(), excitatory.delay_steps.tolist(), strict=True)) == [
        (0, 1, 15),
        (1, 0, 22),
    ]


def test_the_description_key_names_size_and_network_seed_and_only_when_asked():
    params = {"neuron_scale": 0.01, "indegree_scale": 1.0, "input": "dc"}
    assert pd14_exported.key(params) is None
    assert pd14_exported.key({**params, "network_seed": 3}) == "N0.01_K1_seed3"
    assert pd14_exported.params({**params, "network_seed": 3}) == {
        "neuron_scale": 0.01,
        "indegree_scale": 1.0,
        "network_seed": 3,
    }


@pytest.mark.parametrize(
    "change, words",
    [
        (lambda e: e["resources"].update(ranks_per_node=[2]), "read on one MPI rank"),
    ],
)
def test_an_exported_network_where_it_cannot_be_read_is_refused(change, words):
    exp = experiment()
    exp["pd14"]["network_seed"] = 1
    change(exp)
    found = config_problems(exp)
    assert any("pd14.network_seed" in line and words in line for line in found), found


def test_an_exported_network_on_threads_plans():
    exp = experiment(simulators=["nest", "pynn-nest", "brian2-cpp", "genn-cpu"])
    exp["pd14"]["network_seed"] = 1
    assert config_problems(exp) == []


MODEL = {"neuron_scale": 0.001, "indegree_scale": 1.0, "input": "dc", "network_seed": 1}
SIZES = [21, 6, 22, 5, 5, 1, 14, 3]  # PD14's populations at neuron scale 0.001


def write_point(folder, simulator, neurons, times, first_ids, rates):
    """A point's spikes and record: `neurons` numbered from 0, written as the simulator numbers them."""
    folder.mkdir(parents=True)
    population = np.searchsorted(np.cumsum([0, *SIZES[:-1]]), neurons, side="right") - 1
    senders = np.asarray(neurons) - np.cumsum([0, *SIZES[:-1]])[population] + np.asarray(first_ids)[population]
    np.savez(folder / "spikes.npz", senders=senders, times_ms=np.asarray(times))
    record = {"point": {"model_name": "pd14", "model": MODEL}, "ranks": [{"population_first_ids": first_ids}]}
    (folder / "record.json").write_text(json.dumps(record))
    return {
        "experiment": "e",
        "model_name": "pd14",
        "simulator": simulator,
        "neuron_scale": 0.001,
        "indegree_scale": 1.0,
        "input": "dc",
        "network_seed": 1.0,
        "t_presim_ms": 0.0,
        "t_sim_ms": 200.0,
        "seed": 1,
        "valid": True,
        "status": "ok",
        "path": str(folder),
        "rate_L23E_hz": rates[0],
        "rate_L23I_hz": rates[1],
    }


def test_neurons_are_numbered_alike_whatever_ids_the_simulator_gave():
    # NEST: populations one after another from id 1; PyNN: a recorder's id between populations.
    nest = same_network.neuron_index(np.array([1, 21, 22, 28]), [1, 22, 28], [21, 6, 22])
    pynn = same_network.neuron_index(np.array([1, 21, 23, 30]), [1, 23, 30], [21, 6, 22])
    assert nest.tolist() == pynn.tolist() == [0, 20, 21, 27]


NEST_IDS = (1 + np.cumsum([0, *SIZES[:-1]])).tolist()
GENN_IDS = np.cumsum([0, *SIZES[:-1]]).tolist()


def test_each_point_of_an_exported_network_is_compared_with_nests_spikes(tmp_path):
    times = [5.0, 50.0, 150.0, 190.0]
    rows = [
        write_point(tmp_path / "nest", "nest", [0, 1, 21, 30], times, NEST_IDS, (2.0, 4.0)),
        write_point(tmp_path / "genn", "genn-cpu", [0, 1, 21, 31], [5.1, 50.0, 150.0, 190.0], GENN_IDS, (2.2, 4.0)),
    ]
    points = same_network.add_spike_match(pd.DataFrame(rows))
    nest, genn = points.iloc[0], points.iloc[1]
    assert nest["spike_match_run"] == 1.0 and nest["rate_difference_max_rel"] == 0.0
    assert genn["spike_match_early"] == 1.0  # NEST's spikes at 5 and 50 ms: both there (one a step later)
    assert genn["spike_match_run"] == pytest.approx(0.75)  # neuron 30's spike at 190 ms is neuron 31's
    assert genn["spike_match_other_run"] == pytest.approx(0.75)  # and neuron 31's is not NEST's
    assert genn["rate_difference_max_rel"] == pytest.approx(0.2 / 2.2)  # L23E: 2.2 against 2.0, over the larger


def test_a_point_that_doubles_nests_spikes_or_fires_where_nest_is_silent_is_told_apart(tmp_path):
    times = [5.0, 50.0, 150.0, 190.0]
    neurons = [0, 1, 21, 30]
    twice = np.repeat(times, 2) + np.tile([0.0, 0.1], 4)
    rows = [
        write_point(tmp_path / "nest", "nest", neurons, times, NEST_IDS, (2.0, 0.0)),
        write_point(tmp_path / "genn", "genn-cpu", np.repeat(neurons, 2), twice, GENN_IDS, (4.0, 50.0)),
    ]
    genn = same_network.add_spike_match(pd.DataFrame(rows)).iloc[1]
    assert genn["spike_match_early"] == genn["spike_match_run"] == 1.0
    assert genn["spike_match_other_run"] == 0.5
    assert genn["spike_match_other_early"] == 0.5
    assert genn["rate_difference_max_rel"] == 1.0  # L23I silent in NEST, 50 spikes/s here


def test_poisson_points_and_points_of_drawn_networks_get_no_spike_match(tmp_path):
    rows = [write_point(tmp_path / s, s, [0], [5.0], GENN_IDS, (1.0, 1.0)) for s in ("nest", "brian2-cpp")]
    poisson = pd.DataFrame(rows).assign(input="poisson")
    assert same_network.add_spike_match(poisson)["spike_match_run"].isna().all()
    drawn = pd.DataFrame(rows).assign(network_seed=np.nan)
    assert same_network.add_spike_match(drawn)["spike_match_run"].isna().all()


@pytest.mark.parametrize("pd14_change", [{"input": "poisson", "network_seed": 1}, {"input": "dc"}])
def test_genns_exact_model_without_an_exported_network_with_dc_input_is_refused(pd14_change):
    exp = experiment(simulators=["nest", "genn-cpu"], genn={"neuron_model": "iaf_psc_exp"})
    exp["pd14"].update(pd14_change)
    assert any("genn.neuron_model iaf_psc_exp" in line for line in config_problems(exp)), config_problems(exp)
