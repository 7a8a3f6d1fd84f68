"""Activity statistics on spike trains with known answers, and the plausibility verdict."""

import numpy as np
import pytest
from conftest import BOUNDS
from snnbench.network import activity
from snnbench.network.judging import plausibility
from snnbench.network.models import pd14

SIZES = [100] * 8
FIRST_IDS = [1 + 100 * i for i in range(8)]


def trains(kind: str, rate_hz: float, duration_ms: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """Spikes of all 800 neurons: regular (CV 0) or Poisson (CV 1) at the given rate."""
    senders, times = [], []
    for neuron in range(1, 801):
        if kind == "regular":
            t = np.arange(rng.uniform(0, 1000 / rate_hz), duration_ms, 1000 / rate_hz)
        else:
            t = np.cumsum(rng.exponential(1000 / rate_hz, size=int(3 * rate_hz * duration_ms / 1000) + 10))
            t = t[t < duration_ms]
        senders.append(np.full(t.size, neuron))
        times.append(t)
    return np.concatenate(senders), np.concatenate(times)


def test_poisson_trains_have_cv_one_and_right_rate():
    rng = np.random.default_rng(1)
    senders, times = trains("poisson", 20.0, 10_000.0, rng)
    stats = activity.population_stats(senders, times, FIRST_IDS, SIZES, 10_000.0, pd14.POPULATIONS)
    assert [row["population"] for row in stats] == list(pd14.POPULATIONS)
    assert [row["rate_hz"] for row in stats] == pytest.approx([20.0] * 8, rel=0.03)
    assert [row["cv_isi"] for row in stats] == pytest.approx([1.0] * 8, abs=0.05)
    assert all(row["cv_neurons"] == 100 for row in stats)
    assert plausibility.verdict(stats, BOUNDS, None)["plausible"] is True


def test_regular_trains_are_implausible():
    rng = np.random.default_rng(2)
    senders, times = trains("regular", 10.0, 2_000.0, rng)
    stats = activity.population_stats(senders, times, FIRST_IDS, SIZES, 2_000.0, pd14.POPULATIONS)
    assert [row["cv_isi"] for row in stats] == pytest.approx([0.0] * 8, abs=1e-6)
    verdict = plausibility.verdict(stats, BOUNDS, None)
    assert verdict["plausible"] is False
    assert any("L23E ISI CV 0.00 outside" in p for p in verdict["problems"])


def test_silent_and_saturated_populations_are_flagged():
    rng = np.random.default_rng(3)
    senders, times = trains("poisson", 80.0, 1_000.0, rng)
    keep = senders > 100  # L23E silent
    stats = activity.population_stats(senders[keep], times[keep], FIRST_IDS, SIZES, 1_000.0, pd14.POPULATIONS)
    assert stats[0]["rate_hz"] == 0 and stats[0]["spikes"] == 0 and stats[0]["cv_isi"] is None
    problems = plausibility.verdict(stats, BOUNDS, None)["problems"]
    assert problems[0].startswith("L23E silent")
    assert sum("too active" in p for p in problems) == 7


def test_reference_distance():
    rng = np.random.default_rng(4)
    senders, times = trains("poisson", 5.0, 5_000.0, rng)
    stats = activity.population_stats(senders, times, FIRST_IDS, SIZES, 5_000.0, pd14.POPULATIONS)
    reference = ({p: 5.0 for p in pd14.POPULATIONS}, "test")
    ref = plausibility.verdict(stats, BOUNDS, reference)["reference"]
    assert ref["within_tolerance"] is True and ref["max_rel_deviation"] < 0.1
    far = ({p: 10.0 for p in pd14.POPULATIONS}, "test")
    ref = plausibility.verdict(stats, BOUNDS, far)["reference"]
    assert ref["within_tolerance"] is False and ref["max_rel_deviation"] == pytest.approx(0.5, abs=0.05)
