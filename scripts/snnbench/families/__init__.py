"""Benchmark families by name (the `model` of a config experiment, `model_name` of a point).

This registry is the one list of families: the config schema's `model` enum is tested equal to
it. Adding a family: a module with a `Family` subclass (snnbench.run.family), one entry here,
its schema block, and its environments. Nothing outside the family's modules names a family.
The registry sits above the families in the layers (pyproject.toml): it names their modules, and
snnbench.dev.registry_imports checks those names as imports.
"""

from __future__ import annotations

import copy
import importlib
import os
from functools import cache

from snnbench.network.models import DEFAULT
from snnbench.run.family import Family

# name -> "module:Class", imported on demand (a family's modules may need its own environment).
FAMILIES = {
    "snn-training": "snnbench.training.family:Training",
    "snn-data": "snnbench.data.family:Data",
}
# Every other name is a network model (snnbench.network.models): the network family runs it, one
# family object per model.
NETWORK = "snnbench.network.family:Network"
NETWORK_MODELS = "snnbench.network.models"
NETWORK_SCHEMA = "snnbench.network.schema"
NETWORK_SIMULATORS = "snnbench.network.simulators"
# DEFAULT (imported above): the family of an experiment that names no `model`, a network model.


class UnknownFamily(ValueError):
    """A record or experiment names no known family."""


def names() -> list[str]:
    """Every `model` an experiment may name: the network models, then the other families."""
    return [*importlib.import_module(NETWORK_MODELS).names(), *FAMILIES]


@cache
def get(name: str) -> Family:
    if name in FAMILIES:
        module, cls = FAMILIES[name].split(":")
        return getattr(importlib.import_module(module), cls)()
    if name not in names():
        raise UnknownFamily(f"unknown benchmark family (model) {name!r}; known: {', '.join(names())}")
    module, cls = NETWORK.split(":")
    return getattr(importlib.import_module(module), cls)(name)


def of_experiment(experiment: dict) -> Family:
    return get(experiment.get("model", DEFAULT))


def of_spec(spec: dict) -> Family:
    """The family of a point; specs written before families existed are PD14 or name their model."""
    return get(spec.get("model_name", DEFAULT))


def config_schema() -> dict:
    """The config schema with every registered family's parts: the schema file, plus the network
    family's registries (models with their parameter blocks, simulators: snnbench.network.schema)."""
    registries = [importlib.import_module(m).EXTRA_VARIABLE for m in (NETWORK_MODELS, NETWORK_SIMULATORS)]
    return _config_schema(tuple(os.environ.get(variable, "") for variable in registries))


@cache
def _config_schema(registered: tuple[str, ...]) -> dict:  # cached per value of the registries' variables
    # (imported here: the network models import this registry in simulators' environments without jsonschema)
    from snnbench.schemas import CONFIG_SCHEMA, load_schema

    schema = copy.deepcopy(load_schema(CONFIG_SCHEMA))
    return importlib.import_module(NETWORK_SCHEMA).compose(schema, list(FAMILIES), DEFAULT)
