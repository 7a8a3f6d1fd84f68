"""Short, exact messages for a config that cannot run, before any job starts.

The schema (workflow/schemas/config.schema.yaml) is checked here with integers that must be
integers (JSON Schema counts 55.0 as an integer, and a seed 55.0 would make a directory `seed55.0`
that no rule matches), and each error becomes one line that names the config file(s), the key
and what is allowed, instead of the schema dump jsonschema prints by default.
"""

from __future__ import annotations

import jsonschema
from jsonschema.exceptions import best_match

from snnbench.paths import CONFIG_SCHEMA


def _is_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _validator(schema: dict):
    base = jsonschema.Draft202012Validator
    cls = jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))
    return cls(schema)


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
        return f"expected {schema['type']}"
    if error.validator == "not" and "required" in error.validator_value:
        return "neuron_scale is for strong scaling, neuron_scale_per_vp for weak scaling: give the one that fits"
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


def schema_problems(config: dict, schema: dict | None = None) -> list[str]:
    """One line per problem, the most relevant first (deepest in the experiment that fails)."""
    from snnbench.schemas import load_schema

    errors = list(_validator(schema or load_schema(CONFIG_SCHEMA)).iter_errors(config))
    if not errors:
        return []
    first = best_match(errors)
    # if/then/else wraps an experiment's errors: report the innermost one.
    while first.context:
        first = best_match(first.context)
    rest = sorted({describe(e) for e in errors} - {describe(first)})
    return [describe(first), *rest[:4]]


def file_problems(path) -> list[str]:
    """What makes a config file unreadable as a config, with its name and the line: a YAML syntax
    error, an empty file, a top level that is not a mapping of keys. [] if it reads, or is absent."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            content = yaml.safe_load(f)
    except FileNotFoundError:
        return []
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return [f"{path}{where}: not valid YAML: {getattr(error, 'problem', None) or error}"]
    if content is None:
        return [f"{path}: empty; a config file is a mapping of keys (experiments: [...], slurm: ..., ...)"]
    if not isinstance(content, dict):
        return [f"{path}: the top level is a {type(content).__name__}, not a mapping of keys (experiments: [...], ...)"]
    return []


def main(argv=None) -> int:
    """`python -m snnbench.config_check FILE...`: the messages the workflow gives for these config
    files (on top of config/config.yaml, as `--configfile` puts them), without running anything."""
    import argparse

    import yaml
    from snakemake.utils import update_config, validate

    from snnbench import config as snnconfig

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("files", nargs="+", help="config files as given to --configfile")
    files = ["config/config.yaml", *parser.parse_args(argv).files]
    problems = [line for path in files for line in file_problems(path)]
    if not problems:
        merged: dict = {}
        for path in files:
            with open(path, encoding="utf-8") as f:
                update_config(merged, yaml.safe_load(f))
        problems = [f"Error in config ({', '.join(files)}): {line}" for line in schema_problems(merged)]
    if not problems:
        validate(merged, str(CONFIG_SCHEMA))  # fills in the schema's defaults
        try:
            snnconfig.check(merged)
        except snnconfig.ConfigError as error:
            problems = [f"Error in config ({', '.join(files)}): {error}"]
    print("\n".join(problems) or f"{', '.join(files)}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
