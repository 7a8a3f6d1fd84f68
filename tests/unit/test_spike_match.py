"""The spike match cannot be fooled: spikes pair one to one within one step, both ways, and a
population silent on one side is a large rate difference (snnbench.network.judging.spike_match, same_network)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment
from snnbench.network.judging import same_network, spike_match

DT_MS = 0.1


def spikes(neurons, steps):
    """Spikes of `neurons` at time steps `steps` (times in ms on the grid of DT_MS)."""
    return np.asarray(neurons), np.asarray(steps, dtype=float) * DT_MS


def match(reference, other):
    return spike_match.match_fractions(reference, other, DT_MS, window_start_ms=0.0, early_ms=100.0)


def test_a_run_that_emits_every_spike_twice_pairs_half_of_its_spikes():
    reference = spikes([0, 1, 2, 3], [50, 500, 1500, 1900])  # two in the first 100 ms, two after
    twice = spikes(np.repeat(reference[0], 2), np.repeat([50, 500, 1500, 1900], 2) + np.tile([0, 1], 4))
    found = match(reference, twice)
    assert found["spike_match_early"] == found["spike_match_run"] == 1.0  # every one of the reference's
    assert found["spike_match_other_run"] == 0.5  # half of its own
    assert found["spike_match_other_early"] == 0.5


def test_a_spike_shifted_within_one_step_pairs_with_one_reference_spike_only():
    # Neuron 0: one spike of the other run lies one step from each of two reference spikes.
    # Neurons 1 and 2: a step late and a step early, each pairs.
    reference = spikes([0, 0, 1, 2], [100, 102, 300, 400])
    other = spikes([0, 1, 2], [101, 301, 399])
    found = match(reference, other)
    assert found["spike_match_run"] == 0.75
    assert found["spike_match_other_run"] == 1.0


def test_a_spike_shifted_beyond_one_step_stays_unpaired_beside_a_paired_neighbour():
    # The reference's spike at step 12 moves to 14: the other run's spike at 11 pairs with 10 or 12, not both.
    reference = spikes([0, 0], [10, 12])
    other = spikes([0, 0], [11, 14])
    found = match(reference, other)
    assert found["spike_match_run"] == found["spike_match_other_run"] == 0.5


def test_missing_spikes_are_missed_though_a_kept_one_is_a_step_away():
    reference = spikes([0, 0, 0, 0, 7], [10, 11, 12, 13, 900])
    other = spikes([0, 0], [10, 12])  # every second spike of neuron 0 missing, neuron 7 silent
    found = match(reference, other)
    assert found["spike_match_early"] == found["spike_match_run"] == pytest.approx(2 / 5)
    assert found["spike_match_other_run"] == 1.0


def maximum_pairs(reference, other) -> int:
    """The most one-to-one pairs of one neuron within one step, by scipy's assignment (an independent way)."""
    ref_keys, other_keys = spike_match.keys(*reference, DT_MS), spike_match.keys(*other, DT_MS)
    allowed = np.abs(ref_keys[:, None] - other_keys[None, :]) <= spike_match.TOLERANCE_STEPS
    rows, cols = linear_sum_assignment(allowed, maximize=True)
    return int(allowed[rows, cols].sum())


@pytest.mark.parametrize("seed", range(20))
def test_the_pairing_is_one_to_one_and_as_large_as_any(seed):
    # Bursts on a few neurons, so that spikes crowd within a step of each other on both sides.
    rng = np.random.default_rng(seed)
    reference = spikes(rng.integers(0, 3, 40), rng.integers(0, 30, 40))
    other = spikes(rng.integers(0, 3, 30), rng.integers(0, 30, 30))
    found = match(reference, other)
    ref_pairs = round(found["spike_match_run"] * reference[0].size)
    other_pairs = round(found["spike_match_other_run"] * other[0].size)
    assert ref_pairs == other_pairs == maximum_pairs(reference, other)


def rates(**hz) -> pd.Series:
    return pd.Series({f"rate_{population}_hz": rate for population, rate in hz.items()})


def test_a_population_silent_on_one_side_only_is_the_largest_difference_both_ways():
    columns = ["rate_L23E_hz", "rate_L23I_hz"]
    nest, firing = rates(L23E=10.0, L23I=0.0), rates(L23E=10.0, L23I=50.0)
    assert same_network.largest_rate_difference(firing, nest, columns) == 1.0
    assert same_network.largest_rate_difference(nest, firing, columns) == 1.0
    assert same_network.largest_rate_difference(nest, nest, columns) == 0.0  # both silent: they agree
