"""The verdict per simulator (snnbench.network.judging.group_verdict): all of a simulator's runs against the
reference's, by a permutation test of the largest feature-wise difference, on synthetic features and a points table."""

import numpy as np
import pandas as pd
from snnbench.network.judging import group_verdict

SIZE = {"neuron_scale": 0.1, "indegree_scale": 0.1, "input": "poisson", "t_presim_ms": 100, "t_sim_ms": 1000}
FEATURES = [f"{s} {p}" for s in ("rate", "cv_isi", "correlation") for p in ("L23E", "L23I", "L4E", "L4I")]


def runs(rng, count, shift=None) -> pd.DataFrame:
    """Runs' feature means: correlated across features (one run-level factor), as real runs' are."""
    common = rng.normal(size=(count, 1))
    values = 1.0 + 0.1 * (0.6 * common + 0.8 * rng.normal(size=(count, len(FEATURES))))
    frame = pd.DataFrame(values, columns=FEATURES)
    for name, by in (shift or {}).items():
        frame[name] += by * 0.1
    return frame


def test_groups_drawn_as_the_reference_are_said_to_differ_at_about_alpha_at_most():
    rng = np.random.default_rng(1)
    reference = runs(rng, 20)
    said = [group_verdict.group_test(runs(rng, 10), reference)["verdict"] != "agrees" for _ in range(40)]
    assert sum(said) <= 5  # 40 groups at alpha = 0.05: 2 expected; 5 or more has chance < 5 %


def test_a_shift_of_two_seed_sds_in_a_few_features_is_found_and_named():
    rng = np.random.default_rng(2)
    shift = {"correlation L23E": 2.0, "correlation L4E": 2.5, "correlation L23I": 2.0}
    found = group_verdict.group_test(runs(rng, 10, shift), runs(rng, 20))
    assert found["verdict"].startswith("differs (correlation:") and found["p"] <= 0.05
    assert set(found["differs"]) <= set(shift) and found["differs"] and found["runs"] == "10 vs 20"


def test_too_few_runs_for_any_outcome_to_reach_alpha_say_so():
    rng = np.random.default_rng(3)
    assert group_verdict.group_test(runs(rng, 2), runs(rng, 2))["verdict"] == "not enough runs (2 vs 2)"
    exact = group_verdict.group_test(runs(rng, 3, {"rate L4I": 50.0}), runs(rng, 5))  # 56 labellings: all of them
    assert exact["verdict"] == "differs (rate: L4I)" and exact["p"] == 1 / 56


def test_each_finished_point_carries_its_groups_verdict_and_the_reference_its_role():
    rng = np.random.default_rng(4)
    ref, same, off = runs(rng, 6), runs(rng, 6), runs(rng, 6, {"rate L4I": 8.0})
    rows, long = [], []
    for simulator, frame, perturbation in (("nest", ref, ""), ("genn-cpu", same, ""), ("nest", off, '{"w": 1.1}')):
        for i, values in frame.iterrows():
            path = f"results/x/{simulator}{perturbation and '-changed'}/seed{i}"
            names = {"experiment": "x", "simulator": simulator, "simulator_build": simulator, "status": "ok"}
            rows.append({**names, **SIZE, "perturbation": perturbation, "seed": i, "path": path})
            for name, value in values.items():
                statistic, population = name.split(" ")
                long.append({"path": path, "statistic": statistic, "population": population, "mean": value})
    points = pd.DataFrame(rows)
    points.loc[len(points)] = {**rows[0], "status": "failed", "path": "results/x/nest/failed"}
    judged = group_verdict.add_verdicts(points, pd.DataFrame(long), "nest").set_index("path")
    finished = judged[judged["status"] == "ok"]
    verdicts = finished.groupby(["simulator", "perturbation"])["simulator_verdict"].agg(set)
    assert verdicts[("nest", "")] == {"reference"} and verdicts[("genn-cpu", "")] == {"agrees"}
    assert verdicts[("nest", '{"w": 1.1}')] == {"differs (rate: L4I)"}
    assert judged.loc["results/x/nest/failed", "simulator_verdict"] is None
    assert len(group_verdict.table(judged.reset_index())) == 2


def test_rates_and_cvs_of_every_neuron_replace_the_subsamples_and_correlations_stay_the_subsamples():
    long = pd.DataFrame(
        [
            {"path": path, "statistic": statistic, "population": "L4I", "mean": value}
            for path in ("a", "b")
            for statistic, value in (("rate", 1.0), ("cv_isi", 0.5), ("correlation", 0.01))
        ]
    )
    points = pd.DataFrame({"path": ["b", "a"], "rate_L4I_hz": [2.0, 3.0], "cv_isi_L4I": [0.7, None]})
    wide = group_verdict.features(long, points)
    assert wide.loc["a", "rate L4I"] == 3.0 and wide.loc["b", "rate L4I"] == 2.0  # every neuron's, by path
    assert wide.loc["b", "cv_isi L4I"] == 0.7 and np.isnan(wide.loc["a", "cv_isi L4I"])  # not the subsample's 0.5
    assert (wide["correlation L4I"] == 0.01).all()  # correlations: the subsample's
    assert (group_verdict.features(long)["rate L4I"] == 1.0).all()  # without a points table: the subsample's
