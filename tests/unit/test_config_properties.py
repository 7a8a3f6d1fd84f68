"""Configs generated from the composed config schema (snnbench.families.config_schema: the schema file with
every registered family's blocks), then broken: a value of the wrong type, a number out of range, a name
nobody knows, keys that contradict each other, a key taken away. Planned as the workflow plans them
(snnbench.planning.plan, as conftest.config_problems does), each must either plan, or be refused with
planning.ConfigRefused in lines that each name the key; never another exception (a traceback).

Fixed seed (derandomize), so `make test` tries the same configs every time, in under a minute;
SNNBENCH_PROPERTY_EXAMPLES=<n> tries n configs of each kind for a deeper run.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import re

import jsonschema
import pytest
import yaml
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from snnbench import families, planning

EXAMPLES = int(os.environ.get("SNNBENCH_PROPERTY_EXAMPLES", "100"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
# The network models' experiments by scaling, and the other families' experiments.
NETWORK = [
    (model, scaling) for model in ("pd14", "hpc_benchmark", "multi_area_model") for scaling in ("strong", "weak")
]
OTHERS = {"snn-training": "training_experiment", "snn-data": "data_experiment"}

WRONG_TYPES = ["text", 1.5, -3, True, None, [], {}, [1, "a"], {"x": 1}]
OUT_OF_RANGE = [0, -1, -0.5, 1e-300, 1e308, 2**64, math.inf, -math.inf, math.nan]
UNKNOWN_NAMES = ["unknown", "nest-typo", "", "a b", "../x"]


@functools.cache
def experiment_schema(model: str, scaling: str | None = None) -> dict:
    """One kind of experiment of the composed schema, its if/then/else resolved for that model and scaling
    (hypothesis-jsonschema would draw the whole experiment and filter it, ~2 s an example); lists short and
    without repeats, so that the planning behind the schema is reached (and fast)."""
    schema = bounded(families.config_schema())
    if scaling is None:
        return {"$defs": schema["$defs"], **schema["$defs"][OTHERS[model]]}
    experiment = schema["$defs"]["experiment"]
    stub = {"model": model, "scaling": scaling}
    valid = [jsonschema.Draft202012Validator(c["if"]).is_valid(stub) for c in experiment["allOf"]]
    chosen = [c.get("then" if ok else "else") for c, ok in zip(experiment.pop("allOf"), valid, strict=True)]
    experiment["properties"].update(model={"const": model}, scaling={"const": scaling})
    experiment["required"] = [*experiment["required"], "model"]
    return {"$defs": schema["$defs"], **experiment, "allOf": [branch for branch in chosen if branch]}


def bounded(schema):
    """A copy of the schema whose arrays have at most 3 items, none repeated."""
    if isinstance(schema, list):
        return [bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    schema = {key: bounded(value) for key, value in schema.items()}
    if schema.get("type") == "array":
        schema.update(maxItems=min(schema.get("maxItems", 3), 3), uniqueItems=True)
    return schema


# The presets' experiments (config/experiments/): each plans, so that a break in one reaches the planning.
PRESETS = [
    experiment
    for path in sorted((REPO / "config" / "experiments").glob("*.yaml"))
    for experiment in yaml.safe_load(path.read_text())["experiments"]
]


@functools.cache
def drawn(model: str, scaling: str | None = None):
    return from_schema(experiment_schema(model, scaling))


def experiments():
    """An experiment drawn from the schema (one of each kind), or a preset's."""
    kinds = [*NETWORK, *((model, None) for model in OTHERS)]
    return st.one_of(st.sampled_from(kinds).flatmap(lambda kind: drawn(*kind)), st.sampled_from(PRESETS))


def places(value, path=()):
    """Every place in a config value: (path, value) for the value itself and everything in it."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, index))


def replaced(value, path, new):
    if not path:
        return new
    value = copy.copy(value)
    value[path[0]] = replaced(value[path[0]], path[1:], new)
    return value


def pick(draw, items):
    """One of `items`, all alike (sampled_from and randoms() draw the first ones far more often)."""
    return items[draw(st.integers(0, 2**32)) % len(items)]


# Which places each kind of break suits: numbers for out-of-range ones, text for names, mappings for keys.
SUITS = {
    "range": lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    "name": lambda value: isinstance(value, str),
    "unknown key": lambda value: isinstance(value, dict),
}


@st.composite
def broken(draw, experiment):
    """The experiment with one thing broken at one place (within it: a whole experiment of the wrong type is
    refused at once)."""
    kind = pick(draw, ["type", "range", "name", "contradiction", "missing", "unknown key"])
    inside = list(places(experiment))[1:]
    suited = [place for place in inside if SUITS.get(kind, lambda value: True)(place[1])]
    path, found = pick(draw, suited or inside)
    if kind == "type":
        return replaced(experiment, path, pick(draw, WRONG_TYPES))
    if kind == "range":
        return replaced(experiment, path, pick(draw, OUT_OF_RANGE))
    if kind == "name":
        return replaced(experiment, path, pick(draw, [*UNKNOWN_NAMES, *families.names()]))
    if kind == "missing":
        parent = functools.reduce(lambda node, key: node[key], path[:-1], experiment)
        kept = (
            [v for i, v in enumerate(parent) if i != path[-1]]
            if isinstance(parent, list)
            else {k: v for k, v in parent.items() if k != path[-1]}
        )
        return replaced(experiment, path[:-1], kept)
    if kind == "unknown key" and isinstance(found, dict):
        return replaced(experiment, path, {**found, "unknown_key": 1})
    return contradicted(draw, experiment)


def contradicted(draw, experiment):
    """Keys that contradict each other: another model or scaling than the blocks were made for, or a key of
    another kind of experiment (neuron_scale beside neuron_scale_per_vp, a block of another model)."""
    experiment = dict(experiment)
    change = pick(draw, ["model", "scaling", "block"])
    if change == "model":
        experiment["model"] = pick(draw, families.names())
    elif change == "scaling":
        experiment["scaling"] = {"strong": "weak", "weak": "strong"}.get(experiment.get("scaling"), "weak")
    else:
        other = pick(draw, PRESETS)
        key = pick(draw, sorted(other))
        mixed = isinstance(experiment.get(key), dict) and isinstance(other[key], dict)
        experiment[key] = {**experiment[key], **other[key]} if mixed else other[key]
    return experiment


# A problem line starts with the key it names: experiments[0].pd14.t_sim_ms, experiments[], (top level), slurm...
KEY = re.compile(r"^(\(top level\)|experiments\[\d*\]|[a-z_]+[.:\[ ])")


def assert_plans_or_names_keys(experiment) -> None:
    try:
        planning.plan({"experiments": [copy.deepcopy(experiment)]})
    except planning.ConfigRefused as refused:
        assert refused.problems, "refused without a line"
        for line in refused.problems:
            assert KEY.match(line), f"a line that names no key: {line!r}"


@SETTINGS
@given(experiments())
def test_an_experiment_from_the_schema_plans_or_is_refused_naming_its_keys(experiment):
    assert_plans_or_names_keys(experiment)


# What the first runs found: a length or a scale past what the checks could count (tracebacks, now refused).
TINY = {"name": "t", "simulators": ["nest"], "scaling": "strong", "resources": {"threads_per_rank": [1]}, "seeds": [1]}
FOUND = [
    {**TINY, "pd14": {"neuron_scale": 2**64, "indegree_scale": 0.1}},
    {**TINY, "pd14": {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 1e308}},
    {**TINY, "pd14": {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_sim_ms": math.nan}},
    {**TINY, "model": "hpc_benchmark", "hpc_benchmark": {"neuron_scale": 2**64, "indegree_scale": 0.1}},
]


@SETTINGS
@given(experiments().flatmap(broken))
def test_a_broken_experiment_is_refused_naming_its_keys_never_with_a_traceback(experiment):
    assert_plans_or_names_keys(experiment)


@pytest.mark.parametrize("experiment", FOUND, ids=["scale-past-int64", "length-past-steps", "nan", "hpc-scale"])
def test_what_the_first_runs_found_plans_or_is_refused_naming_its_keys(experiment):
    assert_plans_or_names_keys(experiment)
