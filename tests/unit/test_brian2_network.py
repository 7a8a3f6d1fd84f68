"""The Brian2 backend's network drawing and Brian2GeNN's delay binning (numpy only: runs in the
main environment, no Brian2 needed)."""

import platform
import sys

import numpy as np
import pytest
from conftest import experiment, validated
from snnbench import families, planning
from snnbench.network.models import pd14
from snnbench.network.simulators import SIMULATORS, environment_for
from snnbench.network.simulators.brian2.delays import binned_delay_steps, delay_bins
from snnbench.network.simulators.brian2.network import draw_projections, initial_potentials, redraw_normal


def gpus_of(spec: dict) -> int:
    return families.of_spec(spec).resources(spec, {})["gpu"]


def assert_binning_exact_partition(steps: np.ndarray, bins) -> None:
    """Every synapse in exactly one bin; each delay inside its bin's range; ranges ordered and
    disjoint; the bin's delay inside its range."""
    index = np.concatenate([b.index for b in bins])
    assert np.array_equal(np.sort(index), np.arange(steps.size)), "a synapse lost or duplicated"
    for b in bins:
        assert b.index.size > 0
        assert np.all((steps[b.index] >= b.low_steps) & (steps[b.index] <= b.high_steps)), "delay outside its bin"
        assert b.low_steps <= b.delay_steps <= b.high_steps
    for a, b in zip(bins[:-1], bins[1:], strict=True):
        assert a.high_steps < b.low_steps, "bins overlap or are out of order"


@pytest.mark.parametrize("n_bins", [1, 2, 3, 4, 7, 16])
def test_delay_binning_keeps_every_synapse_in_the_right_bin(n_bins):
    net = pd14.derive(0.05, 0.1)
    for proj in draw_projections(net, seed=3)[:12]:
        bins = delay_bins(proj.delay_steps, n_bins)
        assert 1 <= len(bins) <= n_bins
        assert_binning_exact_partition(proj.delay_steps, bins)


def test_delay_binning_is_exact_with_dt_wide_bins():
    steps = np.array([1, 5, 3, 3, 9, 1, 5, 5, 2])
    bins = delay_bins(steps, n_bins=5)  # 5 distinct delays: one bin each
    assert [(b.low_steps, b.high_steps, b.delay_steps) for b in bins] == [
        (1, 1, 1),
        (2, 2, 2),
        (3, 3, 3),
        (5, 5, 5),
        (9, 9, 9),
    ]
    for b in bins:
        assert np.all(steps[b.index] == b.delay_steps)
    assert [b.index.tolist() for b in bins] == [[0, 5], [8], [2, 3], [1, 6, 7], [4]]


def test_delay_binning_groups_contiguous_delays_of_similar_counts():
    steps = np.repeat(np.arange(1, 21), 10)  # 20 delays, 10 synapses each
    bins = delay_bins(steps, n_bins=4)
    assert [(b.low_steps, b.high_steps) for b in bins] == [(1, 5), (6, 10), (11, 15), (16, 20)]
    assert [b.delay_steps for b in bins] == [3, 8, 13, 18]  # the mean of each bin
    assert_binning_exact_partition(steps, bins)
    one = delay_bins(steps, n_bins=1)
    assert len(one) == 1 and one[0].delay_steps == 10  # rint(10.5) = 10 (round half to even)


def test_binned_delays_as_data_give_each_synapse_its_bins_delay():
    steps = draw_projections(pd14.derive(0.05, 0.1), seed=4)[0].delay_steps
    bins = delay_bins(steps, 3)
    delays = binned_delay_steps(steps, bins)
    assert delays.dtype == steps.dtype and delays.shape == steps.shape
    for b in bins:
        assert np.all(delays[b.index] == b.delay_steps)


def test_delay_binning_rejects_no_bins():
    with pytest.raises(ValueError, match="n_bins must be at least 1"):
        delay_bins(np.array([1, 2]), 0)


def test_drawn_network_follows_pd14():
    net = pd14.derive(0.05, 0.1)
    projections = draw_projections(net, seed=7)
    assert len(projections) == int((net.num_synapses > 0).sum()) == 55
    assert sum(p.i.size for p in projections) == net.total_synapses
    for p in projections:
        assert p.i.size == p.j.size == p.weight_pA.size == p.delay_steps.size == net.num_synapses[p.target, p.source]
        assert p.i.min() >= 0 and p.i.max() < net.num_neurons[p.source]
        assert p.j.min() >= 0 and p.j.max() < net.num_neurons[p.target]
        # Redrawn, not clipped: every weight has the projection's sign, and no mass sits at 0.
        sign = np.sign(net.weight_mean_pA[p.target, p.source])
        assert np.all(np.sign(p.weight_pA) == sign)
        assert np.all(p.delay_steps >= 1)
    big = max(projections, key=lambda p: p.i.size)
    t, s = big.target, big.source
    assert big.weight_pA.mean() == pytest.approx(net.weight_mean_pA[t, s], rel=0.02)
    assert big.weight_pA.std() == pytest.approx(net.weight_sd_pA[t, s], rel=0.05)
    # Sources drawn with replacement, uniformly: every source neuron appears about equally often.
    counts = np.bincount(big.i, minlength=net.num_neurons[s])
    assert counts.mean() == pytest.approx(big.i.size / net.num_neurons[s])
    # Same seed, same network; another seed, another network.
    again = draw_projections(net, seed=7)
    assert all(
        np.array_equal(a.j, b.j) and np.array_equal(a.delay_steps, b.delay_steps)
        for a, b in zip(projections, again, strict=True)
    )
    other = draw_projections(net, seed=8)
    assert not np.array_equal(projections[0].i, other[0].i)


def test_redraw_does_not_clip():
    rng = np.random.default_rng(1)
    values = redraw_normal(rng, mean=0.2, sd=1.0, n=20000, low=0.0, high=np.inf)
    assert values.min() > 0 and np.mean(values < 0.01) < 0.02  # a clip would pile ~42 % at 0
    v0 = initial_potentials(pd14.derive(0.1, 0.1), seed=3)
    assert [v.size for v in v0] == pd14.derive(0.1, 0.1).num_neurons.tolist()
    assert v0[0].mean() == pytest.approx(pd14.V0_MEAN_MV[0], abs=0.5)


def test_brian2_points_get_their_environment_gpus_and_options():
    exp = experiment(
        simulators=["nest", "brian2-cpp", "brian2-genn", "brian2-cuda"],
        resources={"threads_per_rank": [1]},
        brian2={"delay_bins": 8},
    )
    specs = {s["simulator"]: s for s in planning.expand_points(validated(exp)["experiments"][0])}
    assert "gpus" not in specs["nest"]["resources"] and "simulator_options" not in specs["nest"]
    assert gpus_of(specs["nest"]) == 0 and gpus_of(specs["brian2-cpp"]) == 0
    assert gpus_of(specs["brian2-genn"]) == 1 and gpus_of(specs["brian2-cuda"]) == 1
    assert specs["brian2-genn"]["simulator_options"]["delay_bins"] == 8
    assert specs["brian2-cpp"]["path"] == "results/unit/brian2-cpp/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    assert {environment_for(s) for s in specs.values()} == {"nest", "brian2", "brian2genn", "brian2cuda"}
    defaults = validated(experiment(simulators=["brian2-genn-cpu"]))["experiments"][0]
    assert planning.expand_points(defaults)[0]["simulator_options"]["delay_bins"] == 4
    assert set(SIMULATORS) >= {"brian2-runtime", "brian2-cpp", "brian2-genn", "brian2-genn-cpu", "brian2-cuda"}


def comparison_points(brian2_l23e: list[float]):
    import pandas as pd

    rows = []
    for simulator, rates in (("nest", [1.0, 1.2, 1.1]), ("brian2-cpp", brian2_l23e)):
        for seed, rate in enumerate(rates, start=1):
            row = {
                "experiment": "x",
                "neuron_scale": 0.1,
                "indegree_scale": 0.1,
                "input": "poisson",
                "t_presim_ms": 100.0,
                "t_sim_ms": 1000.0,
                "simulator": simulator,
                "seed": seed,
                "valid": True,
            }
            row.update({f"rate_{p}_hz": 5.0 + 0.01 * seed for p in pd14.POPULATIONS})
            row["rate_L23E_hz"] = rate
            rows.append(row)
    return pd.DataFrame(rows)


def test_rates_agree_with_nest_within_seed_spread():
    from scipy import stats
    from snnbench.network.judging import rate_agreement

    close = rate_agreement.add_agreement(comparison_points([1.05, 1.25, 1.15]))
    assert close.loc[close["simulator"] == "brian2-cpp", "rates_agree_with_nest"].tolist() == [True] * 3
    assert close.loc[close["simulator"] == "nest", "rates_agree_with_nest"].isna().all()
    # L23E off by 2 spikes/s while both simulators' three seeds have an sd of 0.1: beyond what they allow.
    far = rate_agreement.add_agreement(comparison_points([3.0, 3.2, 3.1]))
    assert far.loc[far["simulator"] == "brian2-cpp", "rates_agree_with_nest"].tolist() == [False] * 3
    table = rate_agreement.agreement(comparison_points([3.0, 3.2, 3.1]))
    row = table[table["population"] == "L23E"].iloc[0]
    assert row["difference_hz"] == pytest.approx(2.0) and row["spread_hz"] == pytest.approx(0.1)
    # Student's two-sample t-test, 3 + 3 seeds pooled (4 degrees of freedom), 5 % over the 8 populations.
    t = stats.t.ppf(1 - 0.05 / 8 / 2, 4)
    assert row["tolerance_hz"] == pytest.approx(t * 0.1 * np.sqrt(2 / 3)) and not row["agrees"]
    # One seed has no spread: no verdict.
    one = rate_agreement.add_agreement(comparison_points([1.05]))
    assert one["rates_agree_with_nest"].isna().all()


def test_build_flags_name_only_environment_folders_with_headers_or_libraries(tmp_path, monkeypatch):
    """A pip environment's folders (Python's own files only) stay out of the generated makefile, so
    checkouts with equal environments share a build; a conda environment's stay in."""
    from snnbench.network.simulators.brian2.build_cache import build_key
    from snnbench.network.simulators.brian2.devices import DEVICES, environment_folders

    venv = tmp_path / "venv"
    (venv / "include" / "python3.13").mkdir(parents=True)
    (venv / "lib" / "python3.13" / "site-packages").mkdir(parents=True)
    assert environment_folders(str(venv)) == ([], [])
    conda = tmp_path / "conda"
    (conda / "include" / "gsl").mkdir(parents=True)
    (conda / "lib").mkdir()
    (conda / "lib" / "libgsl.so.27").write_text("")
    assert environment_folders(str(conda)) == ([str(conda / "include")], [str(conda / "lib")])
    # The build key holds the environment's content, not its path.
    spec = planning.expand_points(validated(experiment(simulators=["brian2-cpp"]))["experiments"][0])[0]
    here = build_key(spec, DEVICES["brian2-cpp"], {"brian2": "2.9"})
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert build_key(spec, DEVICES["brian2-cpp"], {"brian2": "2.9"}) == here
    assert build_key(spec, DEVICES["brian2-cpp"], {"brian2": "2.10"}) != here


def test_the_build_key_names_the_cpu_that_march_native_compiles_for(tmp_path):
    """Brian2's standalone builds are compiled with -march=native into a cache the nodes share: a node of
    another CPU (other instruction set extensions) gets a build of its own; the clock speed changes nothing."""
    from snnbench.network.simulators.brian2.build_cache import cpu_target

    def cpuinfo(name: str, flags: str, mhz: str) -> str:
        block = f"processor\t: {{}}\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\ncpu MHz\t\t: {mhz}\nflags\t\t: {flags}\n"
        (tmp_path / name).write_text("\n".join(block.format(cpu) for cpu in range(2)))
        return cpu_target(tmp_path / name)

    avx512 = cpuinfo("a", "fpu sse2 avx2 avx512f", "2100.0")
    assert cpuinfo("b", "fpu sse2 avx2 avx512f", "3400.5") == avx512
    assert cpuinfo("c", "fpu sse2 avx2", "2100.0") != avx512
    assert cpu_target(tmp_path / "missing") == platform.machine()
