"""Activity bounds from the model's data and from the reference ensemble (snnbench.network.judging.activity_bounds),
a broken ensemble flagged against published rates, and collect's re-judging by the ensemble's bounds."""

import pandas as pd
import pytest
from conftest import BOUNDS
from snnbench.network import models, rows
from snnbench.network.judging import activity_bounds, plausibility
from snnbench.network.models import pd14

PD14 = models.get("pd14")
INPUTS = plausibility.INPUTS
PARAMS = {"neuron_scale": 0.1, "indegree_scale": 0.1, "input": "poisson"}


def stats_of(rates: dict, neurons: int = 100, cv: float = 0.8) -> list[dict]:
    """Population rows as activity.population_stats writes them (1 s windows)."""
    return [
        {
            "population": p,
            "neurons": neurons,
            "spikes": round(r * neurons),
            "rate_hz": r,
            "cv_isi": cv,
            "cv_neurons": 50,
        }
        for p, r in rates.items()
    ]


def test_pd14_bounds_come_from_its_published_rates():
    full = activity_bounds.from_model(BOUNDS, PD14.activity_rates({**PARAMS, "neuron_scale": 0.01}, {}))
    assert full["source"] == "model"
    assert full["max_rate_hz"] == pytest.approx(4 * 8.633)  # L5I at full scale: the highest
    assert full["min_rate_hz"] == pytest.approx(0.903 / 10)  # L23E
    assert "L5I" in full["basis"] and "full scale" in full["basis"]
    small = activity_bounds.from_model(BOUNDS, PD14.activity_rates(PARAMS, {}))
    assert small["max_rate_hz"] == pytest.approx(4 * 7.726) and small["min_rate_hz"] == pytest.approx(0.0402)
    assert "N = K = 0.1" in small["basis"]
    # The runs of docs/same-network.md at K = 1, N = 0.01 (highest L23I 24.2 spikes/s) stay plausible.
    rates = dict(zip(pd14.POPULATIONS, [13.5, 24.2, 5.5, 17.1, 19.8, 21.2, 1.8, 22.8], strict=True))
    assert plausibility.verdict(stats_of(rates), full, None, (), 1.0)["plausible"] is True


def test_a_model_without_rates_keeps_the_config_and_an_upper_end_keeps_its_floor():
    hpc = models.get("hpc_benchmark")
    assert activity_bounds.from_model(BOUNDS, hpc.activity_rates({"indegree_scale": 0.1}, {}))["source"] == "default"
    own = activity_bounds.from_model(BOUNDS, hpc.activity_rates({"indegree_scale": 1}, {}))
    assert own["max_rate_hz"] == 40.0 and own["min_rate_hz"] == BOUNDS["min_rate_hz"] and own["source"] == "model"
    fixed = {**BOUNDS, "bounds_from_data": False}  # the config's bounds for every model
    assert activity_bounds.from_model(fixed, PD14.activity_rates(PARAMS, {})) == activity_bounds.default(fixed)


def test_the_multi_area_run_at_54_spikes_per_s_is_plausible_by_its_theory():
    """INM-6's own simulation at N = K = 0.01, seed 6: STPp-4E at 54.0 spikes/s, above the fixed 50."""
    theory = {"STPp-4E": 41.924, "STPp-23E": 7.948, "V1-23E": 4.804}
    facts = models.get("multi_area_model").activity_rates({}, {"theory_rates_hz": theory})
    bounds = activity_bounds.from_model(BOUNDS, facts)
    assert bounds["max_rate_hz"] == pytest.approx(4 * 41.924) and "STPp-4E" in bounds["basis"]
    run = stats_of({"STPp-4E": 54.0, "STPp-23E": 9.0, "V1-23E": 3.1}, neurons=16)
    assert plausibility.verdict(run, BOUNDS, None)["plausible"] is False  # the fixed ceiling's false alarm
    judged = plausibility.verdict(run, bounds, None, (), 0.3)
    assert judged["plausible"] is True and judged["bounds"]["source"] == "model"
    # The theory is a ceiling only: INM-6's own V1 + V2 run at N = K = 0.01 fires V1-23E at 0.32-0.39 spikes/s
    # against the theory's 12.8 (the floor stays the config's).
    assert bounds["min_rate_hz"] == BOUNDS["min_rate_hz"]
    quiet = stats_of({"STPp-4E": 30.0, "STPp-23E": 2.0, "V1-23E": 0.32}, neurons=160)
    assert plausibility.verdict(quiet, bounds, None, (), 0.3)["plausible"] is True


def test_a_floor_is_judged_only_where_a_count_could_reach_it():
    bounds = {**BOUNDS, "min_rate_hz": 0.5, "min_floor_spikes": 3}
    quiet = stats_of({"L23E": 0.0}, neurons=4)  # 0.5 x 4 x 1 s = 2 expected spikes at the floor: not judged
    assert activity_bounds.rate_problems(quiet, bounds, 1.0) == []
    assert activity_bounds.rate_problems(stats_of({"L23E": 0.0}, neurons=10), bounds, 1.0) == [
        "L23E silent: 0 spikes/s < 0.5"
    ]


def test_bounds_from_an_ensemble_follow_its_spread_per_population():
    model = activity_bounds.from_model(BOUNDS, PD14.activity_rates({**PARAMS, "neuron_scale": 0.02}, {}))
    members = [stats_of({"L23E": 1.0, "L5I": 9.0}, cv=0.7), stats_of({"L23E": 1.2, "L5I": 10.0}, cv=0.9)]
    bounds, problems = activity_bounds.from_ensemble(model, members, 1.0)
    assert problems == [] and bounds["source"] == "ensemble"
    assert bounds["max_rate_hz"] == {"L23E": 2.4, "L5I": 20.0}
    assert bounds["min_rate_hz"] == pytest.approx({"L23E": 0.1, "L5I": 0.9})
    assert bounds["min_cv_isi"] == pytest.approx({"L23E": 0.35, "L5I": 0.35})
    assert bounds["max_cv_isi"] == pytest.approx({"L23E": 1.8, "L5I": 1.8})
    assert plausibility.verdict(stats_of({"L23E": 2.0, "L5I": 15.0}), bounds, None, (), 1.0)["plausible"] is True
    problems = plausibility.verdict(stats_of({"L23E": 3.0, "L5I": 15.0}, cv=0.2), bounds, None, (), 1.0)["problems"]
    assert problems == [
        "L23E too active: 3 spikes/s > 2.4",
        "L23E ISI CV 0.20 outside [0.35, 1.8]",
        "L5I ISI CV 0.20 outside [0.35, 1.8]",
    ]
    assert activity_bounds.from_ensemble(model, members[:1], 1.0) == (model, [])  # one run has no spread


def test_a_broken_ensemble_is_flagged_against_published_rates_and_widens_nothing():
    model = activity_bounds.from_model(BOUNDS, PD14.activity_rates(PARAMS, {}))
    published = PD14.reference_rates(PARAMS)
    doubled = {p: 2 * r for p, r in published[0].items()}  # within the model's ceiling, far from the published
    bounds, problems = activity_bounds.from_ensemble(model, [stats_of(doubled), stats_of(doubled)], 1.0, published)
    assert bounds["source"] == "model" and "flagged" in bounds["basis"]
    assert len(problems) == 8 and problems[0].startswith("L23E mean 0.804 spikes/s vs 0.402 published")
    runaway = {**published[0], "L5I": 120.0}
    _, problems = activity_bounds.from_ensemble(model, [stats_of(runaway), stats_of(published[0])], 1.0)
    assert problems == ["member 0: L5I too active: 120 spikes/s > 30.9"]


def test_collect_judges_a_point_again_by_its_reference_ensemble():
    model = activity_bounds.from_model(BOUNDS, PD14.activity_rates({**PARAMS, "neuron_scale": 0.02}, {}))
    member = stats_of({"L23E": 20.0})
    point = stats_of({"L23E": 36.0})  # above the model's ceiling (34.5), within 2 x the seeds' highest (40)
    frame = pd.DataFrame(
        [
            {"path": f"results/x/seed{seed}", "valid": True, INPUTS: plausibility.Inputs(stats, model, None, (), 1.0)}
            for seed, stats in ((1, member), (2, member), (3, point))
        ]
    )
    validations = [
        (f"results/x/seed{s}", {"ensemble": ["results/x/seed1/stats.npz", "results/x/seed2/stats.npz"]})
        for s in (1, 2, 3)
    ]
    judged = plausibility.judge(frame, validations)
    assert INPUTS not in judged
    assert judged["valid"].tolist() == [True, True, True]
    assert judged["activity_bounds_source"].tolist() == ["model", "model", "ensemble"]  # a member: one run left


def test_a_record_holds_what_was_measured_and_collect_judges_it_a_version_1_verdict_ignored():
    """Schema 2: no verdict in the record (none is made at execute); a record of schema 1 still reads, its verdict
    (made at execute, here wrongly plausible) ignored and the activity judged again from its populations."""
    import jsonschema
    import numpy as np
    from conftest import experiment
    from snnbench import planning
    from snnbench.dev.synthetic import make_record
    from snnbench.records import record

    spec = next(iter(planning.plan({"experiments": [experiment()]}).points.values()))
    measured = make_record(spec, np.random.default_rng(1), silent="L4E")
    assert measured["schema_version"] == record.SCHEMA_VERSION == 2 and "activity" not in measured
    record.validate(measured)
    old = {**measured, "schema_version": 1, "activity": {"checked": True, "plausible": True, "problems": []}}
    old["activity"] |= {"rates_hz": {}, "reference": None}
    record.validate(old)
    with pytest.raises(jsonschema.ValidationError, match="3 is not one of"):
        record.validate({**measured, "schema_version": 3})
    for rec in (measured, old):
        judged = plausibility.judge(pd.DataFrame([rows.point_row(rec, BOUNDS)]), []).iloc[0]
        assert judged["activity_plausible"] is False and not judged["valid"]
        assert "L4E silent" in judged["activity_problems"]
