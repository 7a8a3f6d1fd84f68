"""The JSON schemas of the config and of a record (workflow/schemas/), the config's defaults, and
the config's problems against its schema in short lines.

The config is checked with integers that must be integers (JSON Schema counts 55.0 as an integer,
and a seed 55.0 would make a directory `seed55.0` that no rule matches), and each error becomes one
line that names the key and what is allowed, instead of the schema dump jsonschema prints.
"""

from __future__ import annotations

import copy
import math
from functools import cache
from pathlib import Path

import jsonschema
import yaml
from jsonschema.exceptions import best_match

from snnbench.paths import CONFIG_SCHEMA, RECORD_SCHEMA

__all__ = ["CONFIG_SCHEMA", "RECORD_SCHEMA", "config_problems", "fill_defaults", "load_schema", "schema_default"]


@cache
def _load(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def load_schema(path: Path) -> dict:
    """The schema at path (read once per process; callers must not change it)."""
    return _load(str(path))


def schema_default(*keys: str):
    """A default of the config schema (the one place defaults are written), e.g.
    schema_default("regression", "tolerance")."""
    node = load_schema(CONFIG_SCHEMA)
    for key in keys:
        node = node["properties"][key]
    return node["default"]


def _is_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    # YAML's .nan and .inf are floats: NaN passes every bound (NaN <= 0 is false), infinity none of the sums after.
    return isinstance(instance, int | float) and not isinstance(instance, bool) and math.isfinite(instance)


def _validator(schema: dict, fill_defaults: bool = False):
    base = jsonschema.Draft202012Validator
    types = base.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number})
    cls = jsonschema.validators.extend(base, type_checker=types)
    if fill_defaults:
        check_properties = cls.VALIDATORS["properties"]

        # As Snakemake's validate() does (jsonschema's FAQ), with a copy of each default: the schema is cached.
        def set_defaults(validator, properties, instance, schema):
            for name, subschema in properties.items():
                if "default" in subschema and isinstance(instance, dict):
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
            yield from check_properties(validator, properties, instance, schema)

        cls = jsonschema.validators.extend(cls, {"properties": set_defaults})
    return cls(schema)


def fill_defaults(config: dict, schema: dict | None = None) -> dict:
    """The config schema's defaults, filled into `config` in place where a key is absent (the schema is
    the one place they are written). Returns `config`."""
    for _ in _validator(schema or load_schema(CONFIG_SCHEMA), fill_defaults=True).iter_errors(config):
        pass
    return config


def key_of(path) -> str:
    """experiments[0].pd14.neuron_scale from jsonschema's path deque."""
    key = ""
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key or "(top level)"


def _allowed(error) -> str:
    schema = error.schema
    if error.validator == "additionalProperties" and "properties" in schema:
        return f"allowed keys: {', '.join(schema['properties'])}"
    if error.validator == "type":
        infinite = isinstance(error.instance, float) and not math.isfinite(error.instance)
        return f"expected {schema['type']}" + (", a finite one" if infinite else "")
    if error.validator == "not" and "required" in error.validator_value:
        return "neuron_scale is for strong scaling, neuron_scale_per_vp for weak scaling: give the one that fits"
    if error.validator == "enum" and len(error.message) >= 160:  # the message is cut short: name them here
        return f"allowed: {', '.join(map(str, schema['enum']))}"
    if error.validator == "pattern":
        return f"allowed: text matching {schema['pattern']}"
    return ""


def describe(error) -> str:
    key = key_of(error.absolute_path)
    if error.validator == "not":
        message = f"{key}: neuron_scale and neuron_scale_per_vp exclude each other"
    elif error.validator == "required":
        message = f"{key}: {error.message}"
    else:
        shown = repr(error.instance) if not isinstance(error.instance, dict | list) else type(error.instance).__name__
        message = f"{key}: {error.message if len(error.message) < 160 else shown + ' is not allowed here'}"
    allowed = _allowed(error)
    return f"{message} ({allowed})" if allowed else message


def config_problems(config: dict, schema: dict | None = None) -> list[str]:
    """The config's problems against the schema, one line each naming the key and what is allowed,
    the most relevant first (deepest in the experiment that fails); at most five."""
    errors = list(_validator(schema or load_schema(CONFIG_SCHEMA)).iter_errors(config))
    if not errors:
        return []
    first = best_match(errors)
    # if/then/else wraps an experiment's errors: report the innermost one.
    while first.context:
        first = best_match(first.context)
    rest = sorted({describe(e) for e in errors} - {describe(first)})
    return [describe(first), *rest[:4]]
