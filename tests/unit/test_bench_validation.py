"""make bench-validation's judgement of the workflow's tables (the multi-area model's runs): the shared
ensemble's seeds leave-one-out, the other experiments' runs against all of them."""

import pandas as pd
from snnbench.dev import bench_validation


def table(experiment: str, simulator: str, rates: list[tuple[float, float]], passed: list, valid: list) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "experiment": experiment,
            "simulator": simulator,
            "status": "ok",
            "path": [f"results/{experiment}/{simulator}/x/seed{i + 1}" for i in range(len(rates))],
            "valid": valid,
            "validation_passed": passed,
            "validation_reference": "ref",
            "validation_reference_point": "results/ensemble-m-0123456789/ref/x/seed1",
            "rate_A_hz": [a for a, _ in rates],
            "rate_B_hz": [b for _, b in rates],
        }
    )


def test_tables_are_judged_against_the_shared_ensemble_they_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seeds = [(5.0, 2.0), (5.1, 2.1), (4.9, 1.9), (5.05, 1.95), (4.95, 2.05), (5.0, 2.1)]
    ensemble = table("ensemble-m-0123456789", "ref", seeds, [True] * 6, [True] * 6)
    (tmp_path / "results/ensemble-m-0123456789").mkdir(parents=True)
    ensemble.to_csv(tmp_path / "results/ensemble-m-0123456789/points.csv", index=False)
    changed = table("changed", "other", [(5.0, 2.0), (7.0, 2.0)], [True, False], [True, False])
    changed = pd.concat([changed, table("changed", "other", [(7.1, 2.0)] * 2, [False] * 2, [False] * 2)])
    changed.to_csv(tmp_path / "changed.csv", index=False)

    reference, judged = bench_validation.judge_tables([tmp_path / "changed.csv"])
    assert reference["runs"] == "ensemble-m-0123456789 (ref), leave-one-out" and reference["n"] == 6
    assert not any(reference["rates"]) and not any(reference["statistics"])
    assert judged["runs"] == "changed (other)"
    assert judged["statistics"] == [False, True, True, True] and judged["invalid"] == [False, True, True, True]
    assert judged["rates"] == [False, True, True, True]  # A at 7 spikes/s: outside the seeds' 5 +- 0.1
    assert judged["seed_means"] == [True] and len(reference["seed_means"]) == bench_validation.SPLITS


def test_every_neurons_rates_and_cvs_replace_the_subsamples_means_and_correlations_stay():
    rows = [
        {"population": "L4I", "statistic": s, "mean": 1.0, "ensemble_means": [1.0, 1.1], "ensemble_sems": [0.1, 0.1]}
        for s in ("rate", "cv_isi", "correlation")
    ]
    mine = {"L4I": {"rate_hz": 5.0, "cv_isi": 0.8}}
    members = [{"L4I": {"rate_hz": 4.0, "cv_isi": 0.7}}, {"L4I": {"rate_hz": 4.2, "cv_isi": 0.75}}]
    rate, cv, correlation = bench_validation.with_every_neuron(rows, mine, members)
    assert rate["mean"] == 5.0 and rate["ensemble_means"] == [4.0, 4.2] and "ensemble_sems" not in rate
    assert cv["mean"] == 0.8 and cv["ensemble_means"] == [0.7, 0.75]  # judged on the log scale: no sems
    assert correlation == rows[2]  # correlations: the subsample's, as the rule has them
    assert rows[0]["mean"] == 1.0 and "ensemble_sems" in rows[0]  # the rule's own rows untouched
