"""The network experiment's part of the config schema, made from the family's registries: the
`simulators` enum and the simulators' options blocks (Simulator.options_schema) from the simulators'
registry, the `model` enum from the models' (and the other families' names), and each model's
parameter block (its `parameter_schema`) with the rules every block has: required where the
experiment names its model (the default model: also where it names none), and one neuron scale per
scaling (neuron_scale for strong, neuron_scale_per_vp for weak).
"""

from __future__ import annotations

import copy

from snnbench.network import models, simulators


def compose(schema: dict, other_families: list[str], default: str) -> dict:
    """The config schema (changed in place and returned) with the network family's registries."""
    experiment = schema["$defs"]["experiment"]
    properties = experiment["properties"]
    properties["simulators"]["items"]["enum"] = list(simulators.registered())
    properties["model"]["enum"] = [*models.names(), *other_families]
    properties["model"]["default"] = default
    for key, block in simulators.options_schemas().items():
        properties[key] = copy.deepcopy(block)
    rules = experiment.setdefault("allOf", [])
    for name in models.names():
        block = models.get(name).parameter_schema
        if block is None:
            raise ValueError(f"network model {name!r} ({models.registered()[name]}) declares no parameter_schema")
        properties[name] = copy.deepcopy(block)
        rules += block_rules(name, default)
    return schema


def block_rules(model: str, default: str) -> list[dict]:
    """The rules on a model's block: required for its experiments, one neuron scale per scaling."""
    names_it = {"required": ["model"], "properties": {"model": {"const": model}}}
    experiments_of = {"anyOf": [{"not": {"required": ["model"]}}, names_it]} if model == default else names_it

    def one_scale(required: str, excluded: str) -> dict:
        return {"properties": {model: {"required": [required], "not": {"required": [excluded]}}}}

    return [
        {"if": experiments_of, "then": {"required": [model]}},
        {
            "if": {"properties": {"scaling": {"const": "weak"}}},
            "then": one_scale("neuron_scale_per_vp", "neuron_scale"),
            "else": one_scale("neuron_scale", "neuron_scale_per_vp"),
        },
    ]
