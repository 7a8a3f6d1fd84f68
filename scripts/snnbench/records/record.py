"""The per-point record, one self-describing JSON document for every family: a new one (failed
until its run says otherwise, with provenance), checked against workflow/schemas/record.schema.yaml
and written atomically. Each family fills in its body.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jsonschema

from snnbench.jsonfile import write_json
from snnbench.records import provenance
from snnbench.schemas import RECORD_SCHEMA, load_schema

# 2: measurements only, every verdict at collect (snnbench.network.judging); 1 still reads.
SCHEMA_VERSION = 2


def new(spec: dict) -> dict:
    """A point's record before its run: failed until the run says otherwise, with provenance (its
    benchmark_hash comes once the run reports what it ran, snnbench.records.identity.claim)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "point": spec,
        "status": "failed",
        "failure": None,
        "provenance": provenance.collect(spec),
    }


def validate(record: dict) -> None:
    jsonschema.validate(record, load_schema(RECORD_SCHEMA))


def shape_problem(content) -> str | None:
    """What makes `content` not a record (its missing top-level keys, else the schema's first
    complaint and where), or None."""
    schema = load_schema(RECORD_SCHEMA)
    if isinstance(content, dict) and (missing := [key for key in schema["required"] if key not in content]):
        return f"no {', '.join(missing)}, see {RECORD_SCHEMA.name}"
    error = jsonschema.exceptions.best_match(_validator().iter_errors(content))
    if error is None:
        return None
    where = "/".join(map(str, error.absolute_path))
    return f"{error.message}" + (f" at {where}" if where else "") + f", see {RECORD_SCHEMA.name}"


@functools.cache
def _validator():
    schema = load_schema(RECORD_SCHEMA)
    return jsonschema.validators.validator_for(schema)(schema)


def write(record: dict, path: Path) -> None:
    """Validate, then write atomically (a killed writer never leaves half a record)."""
    validate(record)
    write_json(record, path)


def point_differences(found, planned: dict, shown: int = 3) -> str | None:
    """How a point's spec as found (its spec.json, its record's `point`) differs from the plan for its
    path, in words ("seed 99, planned 1; model.t_sim_ms 200, planned 100"); None where it is the plan."""
    found = found if isinstance(found, dict) else {}
    planned = json.loads(json.dumps(planned))  # as JSON reads it back: lists, not tuples
    keys = list(_differing(found, planned))
    words = [f"{key} {value!r}, planned {plan!r}" for key, value, plan in keys[:shown]]
    more = f"; {len(keys) - shown} more" if len(keys) > shown else ""
    return "; ".join(words) + more if keys else None


def _differing(found: dict, planned: dict, prefix: str = ""):
    for key in dict.fromkeys([*planned, *found]):
        value, plan = found.get(key, "(none)"), planned.get(key, "(none)")
        if isinstance(value, dict) and isinstance(plan, dict):
            yield from _differing(value, plan, f"{prefix}{key}.")
        elif value != plan:
            yield f"{prefix}{key}", value, plan
