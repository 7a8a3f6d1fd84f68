"""The PD14 parameter module against published facts (shared/reference, Potjans & Diesmann 2014)."""

import numpy as np
import pytest
from snnbench.network.models import pd14


def test_psp_to_psc_gives_published_weight():
    # 0.15 mV PSP <-> 87.81 pA PSC for C_m 250 pF, tau_m 10 ms, tau_syn 0.5 ms.
    assert pd14.psc_per_psp(250.0, 10.0, 0.5) * 0.15 == pytest.approx(87.81, abs=0.005)


def test_full_scale_sizes():
    net = pd14.derive(1.0, 1.0)
    assert net.total_neurons == 77169
    assert net.total_synapses == pytest.approx(2.989e8, rel=1e-3)
    assert net.weight_ext_pA == pytest.approx(87.81, abs=0.005)
    assert net.weight_mean_pA[0, 2] == pytest.approx(2 * 87.81, abs=0.01)  # L4E -> L23E doubled
    assert net.weight_mean_pA[0, 1] == pytest.approx(-4 * 87.81, abs=0.02)  # g = -4
    assert np.all(net.dc_amp_pA == 0) and np.allclose(net.poisson_rate_hz, 8.0 * pd14.K_EXT)


def test_dc_input_replaces_poisson_drive():
    net = pd14.derive(1.0, 1.0, "dc")
    # 8 Hz * 87.81 pA * 0.5 ms = 0.3512 pA per external input.
    assert net.dc_amp_pA == pytest.approx(0.35123 * pd14.K_EXT, rel=1e-4)
    assert np.all(net.poisson_rate_hz == 0)


def test_downscaled_indegree_is_compensated():
    full, small = pd14.derive(1.0, 1.0), pd14.derive(0.1, 0.1)
    assert np.allclose(small.weight_mean_pA, full.weight_mean_pA / np.sqrt(0.1))
    assert np.array_equal(small.ext_indegree, np.round(pd14.K_EXT * 0.1).astype(int))
    # The DC current restores the mean input lost by the missing synapses: positive for every
    # population, and none at all without down-scaling.
    assert np.all(small.dc_amp_pA > 0)
    assert np.allclose(pd14.derive(0.1, 1.0).dc_amp_pA, 0)
    # Neuron scale alone scales synapse counts linearly (in-degrees stay).
    assert pd14.derive(0.5, 1.0).total_synapses == pytest.approx(0.5 * full.total_synapses, rel=1e-6)


def test_reference_rates_only_where_published():
    assert pd14.reference_rates(1.0, 1.0, "poisson")[0]["L23E"] == pytest.approx(0.903)
    assert pd14.reference_rates(0.1, 0.1, "poisson")[0]["L5I"] == pytest.approx(7.726)
    assert pd14.reference_rates(0.1, 0.1, "dc") is None
    assert pd14.reference_rates(0.02, 0.1, "poisson") is None


def test_bad_input_type():
    with pytest.raises(ValueError, match="input must be 'poisson' or 'dc'"):
        pd14.derive(0.1, 0.1, "noise")


def test_a_background_perturbation_scales_the_external_drive_only():
    """pd14.perturbation.background_rate_scale (make bench-validation's "background +2.5%"): the Poisson rates,
    and the DC current that stands for background input, times the factor; recurrent coupling untouched."""
    for input, indegree_scale in (("poisson", 0.1), ("poisson", 1.0), ("dc", 0.1)):
        params = {"neuron_scale": 0.1, "indegree_scale": indegree_scale, "input": input}
        base = pd14.network(params)
        changed = pd14.network({**params, "perturbation": {"background_rate_scale": 1.025}})
        np.testing.assert_allclose(changed.poisson_rate_hz, 1.025 * base.poisson_rate_hz)
        extra = 0.025 * pd14.external_current_pA() * (1.0 if input == "dc" else 1 - np.sqrt(indegree_scale))
        np.testing.assert_allclose(changed.dc_amp_pA - base.dc_amp_pA, extra)
        np.testing.assert_array_equal(changed.weight_mean_pA, base.weight_mean_pA)
        np.testing.assert_array_equal(changed.num_synapses, base.num_synapses)
