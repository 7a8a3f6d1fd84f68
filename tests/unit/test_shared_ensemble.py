"""A reference ensemble asked for by `validation.seeds` is made once and found by every experiment that
asks for the same one (snnbench.network.references.ensemble_experiment): named by its content, across
experiments and configs; its records judge other experiments' points at collect, their rows left out."""

import copy

import pytest
from conftest import TINY, config_problems, experiment
from snnbench import planning
from snnbench.network import references


def plan(*experiments):
    return planning.plan({"experiments": copy.deepcopy(list(experiments))})


def test_experiments_asking_for_the_same_ensemble_share_one():
    """Another simulator, a changed network and another seed count: one ensemble, its seeds the union;
    another duration: another ensemble. The name depends on the content only, not on the config."""
    scaling = experiment(name="scaling", simulators=["nest", "brian2-cpp"], validation={"seeds": 5})
    second = experiment(
        name="second",
        simulators=["genn-cpu"],
        resources={"threads_per_rank": [1]},
        validation={"reference": "nest", "seeds": 8},
    )
    changed = experiment(
        name="changed", pd14=dict(TINY["pd14"], perturbation={"weight_scale": 1.2}), validation={"seeds": 5}
    )
    longer = experiment(name="longer", pd14=dict(TINY["pd14"], t_sim_ms=400), validation={"seeds": 5})
    campaign = plan(scaling, second, changed, longer)
    names = {name for name, _ in campaign.shared.values()}
    assert (
        len(names) == 2
        and campaign.shared["scaling"][0] == campaign.shared["second"][0] == campaign.shared["changed"][0]
    )
    shared = campaign.shared["scaling"][0]
    assert campaign.experiments[shared]["seeds"] == list(range(1, 9))
    assert "perturbation" not in next(iter(campaign.points_of(shared).values()))["model"]
    # 5 of the 8 seeds for the experiments asking for 5; the changed network's own runs are not members.
    assert all(len(campaign.ensembles[p]) == 5 for p in campaign.points_of("changed"))
    assert all(len(campaign.ensembles[p]) == 8 for p in campaign.points_of("second"))
    # Another config with one of them finds the same folder: the ensemble is not run again.
    assert plan(second).shared["second"][0] == shared
    # Its points are the workflow's like any other's, found by path.
    point = campaign.point(shared, "nest/nodes1_ranks1_threads1/N0.02_K0.1/seed8")
    assert point is not None and point["path"].startswith(f"results/{shared}/")
    assert campaign.point(shared, "nest/nodes1_ranks1_threads1/N0.02_K0.1/seed9") is None


def test_a_member_the_experiment_runs_itself_is_read_from_its_own_folder():
    """Its run on one thread is the ensemble's seed 1: the 2-thread point is judged against it and the
    ensemble's seeds 2..4, and collect reads seed 1 once (no context row duplicates it)."""
    campaign = plan(experiment(resources={"threads_per_rank": [1, 2]}, seeds=[1], validation={"seeds": 4}))
    shared = campaign.shared["unit"][0]
    own = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    two_threads = campaign.ensembles["results/unit/nest/nodes1_ranks1_threads2/N0.02_K0.1/seed1"]
    assert two_threads[0] == own and all(m.startswith(f"results/{shared}/") for m in two_threads[1:])
    assert len(two_threads) == 4 and len(campaign.ensembles[own]) == 3  # its own run left out of its own
    assert own not in campaign.context_points("unit")
    assert not any(m.endswith("/seed1") for m in campaign.context_points("unit"))


def test_figures_of_an_experiment_judged_by_a_shared_ensemble_show_its_members():
    """genn-cpu alone, judged against nest's shared seeds: its figures read the ensemble's table, and its
    distributions the ensemble's first seed beside its own."""
    second = experiment(
        name="second", simulators=["genn-cpu"], resources={"threads_per_rank": [1]}, validation={"seeds": 3}
    )
    second["validation"]["reference"] = "nest"
    campaign = plan(second)
    shared = campaign.shared["second"][0]
    assert campaign.figure_reference("second") == [f"results/{shared}/points.csv"]
    shown = campaign.figure_params("second", "validation")["reference_points"]
    assert shown == campaign.context_points("second") and len(shown) == 3
    stats = campaign.figure_stats("second", "validation")
    assert f"results/{shared}/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1/stats.npz" in stats
    assert any(path.startswith("results/second/genn-cpu/") for path in stats)
    alone = plan(experiment(seeds=[1, 2, 3]))  # its own reference: nothing of another table
    assert alone.figure_reference("unit") == [] and alone.figure_params("unit", "validation")["reference_points"] == []


def test_without_seeds_the_ensemble_is_the_experiments_own():
    campaign = plan(experiment(simulators=["nest", "brian2-cpp"], seeds=[1, 2, 3]))
    assert campaign.shared == {} and list(campaign.experiments) == ["unit"]
    brian2 = next(p for p, s in campaign.points_of("unit").items() if s["simulator"] == "brian2-cpp")
    assert all(m.startswith("results/unit/nest/") for m in campaign.ensembles[brian2])
    assert campaign.context_points("unit") == []


@pytest.mark.parametrize(
    "overrides, line",
    [
        ({"simulators": ["genn-cpu"], "validation": {"reference": "nest"}}, "validation.reference 'nest' is not among"),
        ({"name": references.ENSEMBLE_PREFIX + "pd14-x"}, "names starting 'ensemble-'"),
        # A reference the model does not run: refused before any job, with or without a shared ensemble (issue 52).
        ({"validation": {"reference": "torch", "seeds": 20}}, "validation.reference 'torch' does not run model pd14"),
        ({"validation": {"reference": "nest-inm6", "seeds": 3}}, "'nest-inm6' does not run model pd14: allowed"),
        ({"validation": {"reference": "torch"}}, "validation.reference 'torch' does not run model pd14"),
    ],
)
def test_an_ensemble_that_cannot_be_found_is_refused(overrides, line):
    problems = config_problems(experiment(**overrides))
    assert len(problems) == 1 and line in problems[0]


def test_the_ensembles_shape_is_the_models_reference_shape_or_the_one_named_never_the_experiments():
    """An experiment of 2 threads only built its ensemble at 2 threads, unsaid (issue 52)."""
    two = plan(experiment(resources={"threads_per_rank": [2]}, seeds=[1], validation={"seeds": 3}))
    name = two.shared["unit"][0]
    assert {s["resources"]["threads_per_rank"] for s in two.points_of(name).values()} == {1}
    named = experiment(
        resources={"threads_per_rank": [2]}, seeds=[1], validation={"seeds": 3, "shape": {"threads_per_rank": 2}}
    )
    chosen = plan(named)
    assert {s["resources"]["threads_per_rank"] for s in chosen.points_of(chosen.shared["unit"][0]).values()} == {2}
    assert chosen.shared["unit"][0] != name  # another shape, another ensemble


def test_a_config_planned_twice_plans_the_same():
    """Planning adds the shared ensembles to the config (jobs read time limits there); planning the same
    config again starts from what was configured, and a user's experiment with the prefix stays refused."""
    config = {"experiments": [experiment(validation={"seeds": 3})]}
    first = planning.plan(config)
    again = planning.plan(config)
    assert list(again.experiments) == list(first.experiments) and len(config["experiments"]) == 2
    assert again.experiments[again.shared["unit"][0]]["seeds"] == [1, 2, 3]
    copied = dict(config["experiments"][1], description="mine")
    assert "names starting 'ensemble-'" in " ".join(config_problems(copied))
