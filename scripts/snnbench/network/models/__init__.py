"""Network models by name: the `model` of a network experiment and `model_name` of its points.

This registry is the one list of network models. Adding one: a module with a `NetworkModel`
subclass (snnbench.network.models.base), one entry here and, per simulator that runs it, a builder
(a snnbench.network.simulators.base.Backend subclass named in the model's `builders`). Models kept
outside the package (a site's own, the tests') are registered by the environment variable
SNNBENCH_NETWORK_MODELS, "name=module:Class" separated by commas: every process of a run (the
workflow, its jobs, the ranks) inherits it.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
from functools import cache

from snnbench.network.models.base import NetworkModel

MODELS = {
    "pd14": "snnbench.network.models.pd14:PD14",
    "hpc_benchmark": "snnbench.network.models.hpc_benchmark:HpcBenchmark",
}
DEFAULT = "pd14"  # the model of a spec written before models had names
EXTRA_VARIABLE = "SNNBENCH_NETWORK_MODELS"


def registered() -> dict[str, str]:
    """name -> "module:Class" of every model: the package's, then those named by the variable."""
    extra = os.environ.get(EXTRA_VARIABLE, "")
    named = dict(item.strip().split("=", 1) for item in extra.split(",") if "=" in item)
    return {**MODELS, **named}


def of_spec(spec: dict) -> NetworkModel:
    return get(spec.get("model_name", DEFAULT))


def names() -> list[str]:
    return list(registered())


@cache
def get(name: str) -> NetworkModel:
    """The model named `name`; KeyError if none is registered under it."""
    module, cls = registered()[name].split(":")
    return getattr(importlib.import_module(module), cls)()


def compose_schema(schema: dict) -> dict:
    """The config schema with the parameter block of every model registered from outside: its name
    in the `model` enum, its block (the model's `parameter_schema`) a key of a network experiment,
    and the rules the schema writes for PD14's block (required for its model; one neuron scale for
    the scaling) repeated for it. PD14's block is written in the schema file; every other model's
    is its module's `parameter_schema`."""
    experiment = schema["$defs"]["experiment"]
    enum = experiment["properties"]["model"]["enum"]
    # The default model's rules on its block that hold for any model's (one neuron scale per scaling).
    rules = [rule for rule in experiment["allOf"] if f'"{DEFAULT}"' in json.dumps(rule.get("then", {}))]
    rules = [rule for rule in rules if "scaling" in json.dumps(rule.get("if", {}))]
    for name in registered():
        if name in enum:
            continue
        block = get(name).parameter_schema
        if block is None:
            raise ValueError(f"network model {name!r} ({registered()[name]}) declares no parameter_schema")
        enum.append(name)
        experiment["properties"][name] = copy.deepcopy(block)
        required = {"required": ["model"], "properties": {"model": {"const": name}}}
        experiment["allOf"].append({"if": required, "then": {"required": [name]}})
        for rule in rules:
            experiment["allOf"].append(json.loads(json.dumps(rule).replace(f'"{DEFAULT}"', json.dumps(name))))
    return schema
