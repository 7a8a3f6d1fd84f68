"""Validation statistics on spike trains with known answers, distances and the verdict."""

import json
import math

import numpy as np
import pytest
from snnbench.network import references, validation
from snnbench.network.judging import validity
from snnbench.network.models import pd14

SIZE = 60
FIRST_IDS = [1 + SIZE * i for i in range(8)]
SIZES = [SIZE] * 8
TOLERANCE = {"ks_alpha": 0.001, "ks_margin": {"rate": 0.03, "cv_isi": 0.03, "correlation": 0.06}}


def poisson(rate_hz, duration_ms, rng) -> np.ndarray:
    t = np.cumsum(rng.exponential(1000 / rate_hz, size=int(2 * rate_hz * duration_ms / 1000) + 20))
    return t[t < duration_ms]


def network(rate_hz, duration_ms, seed, identical=False):
    """Spikes of 8 x SIZE neurons, each an independent Poisson train (or all the same train)."""
    rng = np.random.default_rng(seed)
    shared = poisson(rate_hz, duration_ms, rng)
    senders, times = [], []
    for neuron in range(1, 8 * SIZE + 1):
        t = shared if identical else poisson(rate_hz, duration_ms, rng)
        senders.append(np.full(t.size, neuron))
        times.append(t)
    return np.concatenate(senders), np.concatenate(times)


def stats_of(rate_hz=10.0, duration_ms=20_000.0, seed=1, identical=False, neurons=40):
    senders, times = network(rate_hz, duration_ms, seed, identical)
    return validation.spike_statistics(
        senders, times, FIRST_IDS, SIZES, 0.0, duration_ms, neurons, 2.0, populations=pd14.POPULATIONS
    )


def test_poisson_trains_rate_and_cv_one():
    stats = stats_of(rate_hz=10.0)
    assert list(stats) == list(pd14.POPULATIONS)
    for samples in stats.values():
        assert samples["rate"].size == 40 and int(samples["rate_neurons"]) == 40
        assert np.mean(samples["rate"]) == pytest.approx(10.0, rel=0.03)
        assert np.mean(samples["cv_isi"]) == pytest.approx(1.0, abs=0.03)
        # Independent trains: correlations scatter around 0 (sd ~ 1/sqrt(bins)).
        assert samples["correlation"].size == 40 * 39 // 2
        assert abs(np.mean(samples["correlation"])) < 0.005


def test_regular_trains_have_cv_zero():
    duration = 5000.0
    senders = np.repeat(np.arange(1, 8 * SIZE + 1), 50)
    times = np.tile(np.arange(50) * 100.0 + 3.0, 8 * SIZE)
    stats = validation.spike_statistics(
        senders, times, FIRST_IDS, SIZES, 0.0, duration, 10, 2.0, populations=pd14.POPULATIONS
    )
    assert np.allclose(stats["L4E"]["cv_isi"], 0.0)
    assert np.allclose(stats["L4E"]["rate"], 10.0)


def test_identical_trains_correlate_perfectly():
    stats = stats_of(identical=True, neurons=10)
    assert np.allclose(stats["L23E"]["correlation"], 1.0)
    assert stats["L23E"]["correlation"].size == 45


def test_silent_neurons_count_in_rates_not_in_cv_or_correlations():
    senders, times = network(10.0, 5000.0, seed=3)
    keep = ~np.isin(senders, np.arange(1, 11))  # the first 10 neurons of L23E are silent
    stats = validation.spike_statistics(
        senders[keep], times[keep], FIRST_IDS, SIZES, 0.0, 5000.0, 20, 2.0, populations=pd14.POPULATIONS
    )
    assert stats["L23E"]["rate"].size == 20 and np.count_nonzero(stats["L23E"]["rate"] == 0) == 10
    assert stats["L23E"]["cv_isi"].size == 10
    assert stats["L23E"]["correlation"].size == 45 and int(stats["L23E"]["correlation_neurons"]) == 10


def test_small_population_uses_all_its_neurons():
    senders, times = network(10.0, 2000.0, seed=4)
    sizes = [SIZE] * 7 + [5]
    stats = validation.spike_statistics(
        senders, times, FIRST_IDS, sizes, 0.0, 2000.0, 40, 2.0, populations=pd14.POPULATIONS
    )
    assert stats["L6I"]["rate"].size == 5 and stats["L6E"]["rate"].size == 40


def test_distances_same_and_different_distributions():
    a, b = stats_of(seed=1), stats_of(seed=2)
    slow = stats_of(rate_hz=5.0, seed=3)
    ks_same, w_same = validation.distance(a["L4E"]["rate"], b["L4E"]["rate"], 5)
    ks_diff, w_diff = validation.distance(a["L4E"]["rate"], slow["L4E"]["rate"], 5)
    assert ks_same < 0.4 and w_same < 0.5
    assert ks_diff == 1.0 and w_diff == pytest.approx(5.0, rel=0.1)
    assert math.isnan(validation.distance(np.ones(3), np.ones(10), 5)[0])


def test_the_ks_statistic_is_scipys_without_its_p_value():
    from scipy import stats

    rng = np.random.default_rng(3)
    pairs = [
        (rng.normal(size=40), rng.normal(0.3, size=25)),
        (rng.integers(0, 5, 30) / 2.0, rng.integers(0, 6, 50) / 2.0),  # ties: rates of few spikes
        (np.zeros(12), np.r_[np.zeros(6), np.ones(6)]),
        (rng.exponential(size=3000), rng.exponential(1.05, size=2000)),
    ]
    for a, b in pairs:
        assert validation.ks_statistic(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic, abs=1e-12)
    assert math.isnan(validation.ks_distance(np.ones(3), np.ones(10), 5))


def test_ks_critical_value():
    # Smirnov's asymptotic table: c(0.05) = 1.358, c(0.001) = 1.949.
    assert validity.ks_critical(0.05, 100, 100) == pytest.approx(1.358 * math.sqrt(2 / 100), rel=1e-3)
    assert validity.ks_critical(0.001, 50, 200) == pytest.approx(1.949 * math.sqrt(250 / 10_000), rel=1e-3)
    assert validity.ks_critical(0.05, 0, 10) == math.inf


def judged(point, reference, seeds=()):
    rows = validation.compare(point, reference, list(seeds), min_samples=5)
    return validity.judge_point({"checked": True, "rows": rows}, TOLERANCE), rows


def test_verdict_passes_same_model_and_flags_a_different_one():
    reference = stats_of(seed=1)
    ok, rows = judged(stats_of(seed=2), reference, [stats_of(seed=5)])
    assert ok["validation_checked"] and ok["validation_passed"], ok["validation_problems"]
    assert len(rows) == 8 * 3 and all(r["n_seeds"] == 1 for r in rows)
    assert 0 < ok["ks_rate_max"] < 1 and ok["validation_excess_rate"] < 1

    bad, _ = judged(stats_of(rate_hz=5.0, seed=3), reference)
    assert bad["validation_passed"] is False
    assert bad["validation_problems"].startswith("L23E rate: KS 1.000 to reference")
    assert bad["validation_excess_rate"] > 1

    correlated, _ = judged(stats_of(identical=True, seed=4), reference)
    assert correlated["validation_passed"] is False and "correlation" in correlated["validation_problems"]


def test_verdict_of_unchecked_point():
    result = validity.judge_point({"checked": False, "reason": "point failed", "rows": []}, TOLERANCE)
    assert not result["validation_checked"] and result["validation_passed"] is None
    assert result["validation_problems"] == "point failed" and np.isnan(result["validation_excess_rate"])


def test_point_files_round_trip(tmp_path):
    senders, times = network(10.0, 1000.0, seed=6)
    spec = {"path": "results/x/nest/s/N1_K1/seed1", "model": {"neuron_scale": 0.01, "indegree_scale": 0.1}}
    spec["model"].update(input="poisson", t_presim_ms=0.0, t_sim_ms=1000.0, record_spikes=True)
    record = {"point": spec, "status": "ok", "ranks": [{"population_first_ids": FIRST_IDS}]}
    (tmp_path / "record.json").write_text(json.dumps(record))
    np.savez(tmp_path / "spikes.npz", senders=senders, times_ms=times)
    settings = {"neurons_per_population": 20, "bin_ms": 2.0, "min_spikes_for_cv": 3}
    validation.point_statistics(tmp_path / "record.json", tmp_path / "spikes.npz", tmp_path / "stats.npz", settings)
    stats, meta = validation.load(tmp_path / "stats.npz")
    assert meta["settings"] == settings and meta["reason"] is None
    sizes = pd14.derive(0.01, 0.1).num_neurons
    assert [stats[p]["rate"].size for p in pd14.POPULATIONS] == [min(20, n) for n in sizes]

    out = validation.validate_point(tmp_path / "stats.npz", tmp_path / "stats.npz", [], tmp_path / "v.json", 5)
    assert out["checked"] and out["is_reference"]
    assert all(r["ks_reference"] == 0.0 for r in out["rows"] if r["n_values"] >= 5)

    record["status"] = "failed"
    (tmp_path / "record.json").write_text(json.dumps(record))
    validation.point_statistics(tmp_path / "record.json", tmp_path / "spikes.npz", tmp_path / "f.npz", settings)
    failed = validation.validate_point(tmp_path / "f.npz", tmp_path / "stats.npz", [], tmp_path / "f.json", 5)
    assert not failed["checked"] and failed["reason"] == "point failed"


def test_reference_and_seed_peers_from_the_config():
    from snnbench import planning
    from snnbench.dev import synthetic

    strong = synthetic.experiment(name="s", simulators=("nest", "brian2-cpp"), threads=(2, 1), seeds=(7, 3))
    weak = synthetic.experiment(name="w", threads=(1, 2), seeds=(1, 2), scaling="weak")
    specs = planning.expand_points(strong) + planning.expand_points(weak)
    reference_of = references.reference_index(specs, {"s": ["nest", "brian2-cpp"], "w": ["nest"]})
    assert len(reference_of) == len(specs)
    first = "results/s/nest/nodes1_ranks1_threads1/N0.1_K0.1/seed3"
    assert {reference_of[p["path"]] for p in specs if p["experiment"] == "s"} == {first}
    # Weak scaling: each model size has its own reference, its 1-seed point of the lowest seed.
    assert reference_of["results/w/nest/nodes1_ranks1_threads2/N0.1_K0.1/seed2"].endswith("threads2/N0.1_K0.1/seed1")
    assert reference_of["results/w/nest/nodes1_ranks1_threads1/N0.05_K0.1/seed2"].endswith("N0.05_K0.1/seed1")
    peers = references.seed_peer_index(specs)
    assert peers["results/s/brian2-cpp/nodes1_ranks1_threads2/N0.1_K0.1/seed7"] == [
        "results/s/brian2-cpp/nodes1_ranks1_threads2/N0.1_K0.1/seed3"
    ]
    shown = references.figure_points(specs)
    assert len(shown) == 2 * 2 + 2 and all(p.endswith(("seed3", "seed1")) for p in shown)


def test_judge_table_judges_each_point_as_if_alone():
    """collect judges all points in one table: no point's rows change another's verdict (the number of
    comparisons, the seeds' excess and the problems are per point)."""
    import pandas as pd

    reference = stats_of(seed=1, neurons=30, duration_ms=5000.0)
    cases = {
        "same": stats_of(seed=2, neurons=30, duration_ms=5000.0),
        "slow": stats_of(rate_hz=5.0, seed=3, neurons=30, duration_ms=5000.0),
        "correlated": stats_of(identical=True, seed=4, neurons=30, duration_ms=5000.0),
    }
    results = {
        name: {"checked": True, "rows": validation.compare(s, reference, [reference], 5)} for name, s in cases.items()
    }
    results["failed"] = {"checked": False, "reason": "point failed", "rows": []}
    rows = pd.DataFrame([dict(r, path=name) for name, res in results.items() for r in res["rows"]])
    meta = pd.DataFrame(
        [
            {"path": n, "checked": r["checked"], "reason": r.get("reason"), "reference": "ref"}
            for n, r in results.items()
        ]
    )
    table = validity.judge_table(rows, meta, TOLERANCE)
    for name, result in results.items():
        alone = validity.judge_point({**result, "reference": "ref"}, TOLERANCE)
        pd.testing.assert_series_equal(table.loc[name], alone, check_names=False, obj=name)
    assert list(table["validation_passed"]) == [True, False, False, None]
