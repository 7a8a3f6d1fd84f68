"""The JSON schemas of the config and of a record (workflow/schemas/), and the config's defaults."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from snnbench.paths import CONFIG_SCHEMA, RECORD_SCHEMA

__all__ = ["CONFIG_SCHEMA", "RECORD_SCHEMA", "load_schema", "schema_default"]


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
