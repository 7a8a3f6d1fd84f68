"""Config validation (schema and semantic checks) and expansion into scaling points."""

import copy
from pathlib import Path

import pytest
import yaml
from conftest import REPO, experiment, validated
from snakemake.utils import validate
from snnbench import families, paths, planning, schemas
from snnbench.network.family import fmt_scale
from snnbench.planning import check


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"scaling": "fast"}, "'fast' is not one of ['strong', 'weak']"),
        ({"simulators": ["nset"]}, "'nset' is not one of ['nest', 'pynn-nest', 'brian2-runtime'"),
        ({"name": "a/b"}, "does not match"),
        ({"name": "x; rm -rf ~"}, "does not match"),
        ({"seeds": [0]}, "0 is less than the minimum of 1"),
        ({"seeds": []}, "should be non-empty"),
        ({"resources": {"threads_per_rank": [0]}}, "0 is less than the minimum of 1"),
        ({"resources": {"threads": [1]}}, "'threads' was unexpected"),
        ({"threads": [1]}, "'threads' was unexpected"),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 1.5}}, "1.5 is greater than the maximum of 1"),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "input": "noise"}}, "'noise' is not one of"),
        ({"pd14": {"indegree_scale": 0.1}}, "'neuron_scale' is a required property"),
        ({"scaling": "weak"}, "'neuron_scale_per_vp' is a required property"),
        ({"time_limit_min": 0}, "less than or equal to the minimum of 0"),
        # NEST's RNG seeds lie in [1, 2^32 - 2]: refused here, not inside the describe_network job.
        (
            {"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "network_seed": -1}},
            "-1 is less than the minimum of 1",
        ),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "network_seed": 0}}, "0 is less than the minimum of 1"),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "network_seed": 1.5}}, "1.5 is not of type 'integer'"),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "network_seed": "one"}}, "'one' is not of type"),
        ({"pd14": {"neuron_scale": 0.1, "indegree_scale": 0.1, "network_seed": 2**32 - 1}}, "is greater than the max"),
    ],
)
def test_bad_experiment_names_key_and_allowed_values(change, message):
    bad = experiment(**change)
    with pytest.raises(planning.ConfigRefused) as error:
        validated(bad)
    text = str(error.value)
    assert message in text
    assert "experiments[0]" in text  # names where in the config


def test_missing_required_key_is_named():
    bad = experiment()
    del bad["seeds"]
    with pytest.raises(planning.ConfigRefused, match="experiments\\[0\\]: 'seeds' is a required property"):
        validated(bad)


def test_defaults_are_filled():
    cfg = validated(experiment())
    exp = cfg["experiments"][0]
    assert exp["model"] == "pd14"
    assert exp["resources"]["nodes"] == [1] and exp["resources"]["ranks_per_node"] == [1]
    assert exp["pd14"]["input"] == "poisson" and exp["pd14"]["record_spikes"] is True
    assert cfg["activity_check"]["max_rate_hz"] == 50.0


def test_duplicate_experiment_names_rejected():
    with pytest.raises(planning.ConfigRefused, match="experiments\\[\\].name must be unique; repeated: a"):
        validated(experiment(name="a"), experiment(name="a"))


@pytest.mark.parametrize("name", ["archives", "crates", "dashboard", "imported", "comparisons"])
def test_an_experiment_named_like_a_folder_snnbench_writes_is_refused(name):
    with pytest.raises(planning.ConfigRefused) as refused:
        validated(experiment(name=name))
    (line,) = refused.value.problems
    assert line == (
        f"experiments[0] ({name}): name {name!r} is a folder snnbench itself writes under results/; "
        f"not one of: {', '.join(sorted(paths.OWN_FOLDERS))}"
    )


def test_the_folders_the_rules_write_under_results_are_the_reserved_names():
    """The rules write their paths out (Snakemake's convention); paths.OWN_FOLDERS must name every folder of theirs
    beside the experiments', or an experiment could be named like it."""
    import re

    rules = "".join(path.read_text() for path in (paths.REPO / "workflow" / "rules").glob("*.smk"))
    folders = set(re.findall(r'"results/([A-Za-z0-9_-]+)/', rules))
    assert folders and folders <= set(paths.OWN_FOLDERS), folders


def test_repeated_seeds_rejected():
    with pytest.raises(planning.ConfigRefused, match="seeds must not repeat"):
        validated(experiment(seeds=[3, 3]))


def test_strong_scaling_points():
    exp = validated(experiment(resources={"threads_per_rank": [1, 2, 4], "ranks_per_node": [1, 2]}, seeds=[1, 2]))
    points = planning.expand_points(exp["experiments"][0])
    assert len(points) == 3 * 2 * 2
    assert {p["model"]["neuron_scale"] for p in points} == {0.02}
    vps = sorted({(p["resources"]["ranks"], p["resources"]["virtual_processes"]) for p in points})
    assert vps == [(1, 1), (1, 2), (1, 4), (2, 2), (2, 4), (2, 8)]
    assert len({p["path"] for p in points}) == len(points)
    p = next(p for p in points if p["resources"]["virtual_processes"] == 8 and p["seed"] == 2)
    assert p["path"] == "results/unit/nest/nodes1_ranks2_threads4/N0.02_K0.1/seed2"


def test_weak_scaling_grows_neurons_with_vps():
    exp = experiment(
        scaling="weak",
        resources={"threads_per_rank": [1, 2], "ranks_per_node": [1, 3]},
        pd14={"neuron_scale_per_vp": 0.01, "indegree_scale": 0.05},
    )
    points = planning.expand_points(validated(exp)["experiments"][0])
    scale = {p["resources"]["virtual_processes"]: p["model"]["neuron_scale"] for p in points}
    assert scale == {1: 0.01, 2: 0.02, 3: 0.03, 6: 0.06}  # exact decimals, no 0.030000000000000002
    assert all(p["model"]["indegree_scale"] == 0.05 for p in points)
    assert all("neuron_scale_per_vp" not in p["model"] for p in points)
    assert {p["path"].split("/")[4] for p in points} == {"N0.01_K0.05", "N0.02_K0.05", "N0.03_K0.05", "N0.06_K0.05"}


def test_spec_does_not_change_when_unrelated_settings_change():
    """Finished points rerun only when their own parameters change (Snakemake's params trigger)."""
    base = validated(experiment())["experiments"][0]
    changed = copy.deepcopy(base)
    changed["seeds"] = [1, 2]
    changed["time_limit_min"] = 1
    changed["description"] = "edited"
    before = {p["path"]: p for p in planning.expand_points(base)}
    after = {p["path"]: p for p in planning.expand_points(changed)}
    assert all(after[path] == spec for path, spec in before.items())
    assert planning.time_limit_s(validated(changed), after[next(iter(after))]) == 60.0


def test_fmt_scale():
    assert [fmt_scale(x) for x in (1, 1.0, 0.1, 0.02, 0.01 * 3, 2.5)] == [
        "1",
        "1",
        "0.1",
        "0.02",
        "0.03",
        "2.5",
    ]


def test_default_config_and_experiment_files_are_valid(monkeypatch):
    """Each as the workflow reads it: on top of config/config.yaml."""
    monkeypatch.chdir(REPO)
    for path in ["config/config.yaml", *sorted(map(str, Path("config/experiments").glob("*.yaml")))]:
        assert check.check([path]) == [], path
        assert planning.plan_files([path]).points, path


def test_defaults_are_those_snakemakes_validate_fills_in(monkeypatch, tmp_path):
    """The planner fills in the schema's defaults itself (from the cached schema, so that a job's
    start-up does not read it again); they are what Snakemake's validate() fills in, given the
    schema the planner checks with (the file and the network models' blocks)."""
    monkeypatch.chdir(REPO)
    composed = tmp_path / "config.schema.yaml"
    composed.write_text(yaml.safe_dump(families.config_schema()))
    examples = [[experiment()], [experiment(builds={"b": {"pip": "nest-simulator==3.10.0"}})]]
    configs = [{"experiments": copy.deepcopy(e)} for e in examples]
    configs += [planning.read_config(["config/config.yaml", str(p)]) for p in Path("config/experiments").glob("*.yaml")]
    for config in configs:
        theirs = copy.deepcopy(config)
        validate(theirs, str(composed))
        assert schemas.fill_defaults(copy.deepcopy(config), families.config_schema()) == theirs
    filled = schemas.fill_defaults({"experiments": [experiment()]})
    filled["figures"]["experiment"]["scaling"].append("changed")  # a copy, not the cached schema's default
    assert "changed" not in schemas.schema_default("figures", "experiment")["scaling"]
