"""Each point of a run crate (snnbench.results.crate) as Provenance Run Crate 0.5 describes a tool execution.

A point is one execution of the execute rule: a CreateAction whose instrument is the tool (the rule, in the
environment the point ran in: its packages as softwareRequirements), whose object is the point's spec.json
and the input files its record names (with the SHA-256 the point read), and whose result is its record,
its other outputs, its hardware records and Snakemake's benchmark of the job. Its startTime is the record's
started_utc, its endTime that plus the record's wall_time_s; its status the record's; the environment
variables the record kept are its `environment`, the benchmark's and the record's measures its
`resourceUsage`, the machine its `location`. The workflow's HowToStep of the rule and one ControlAction per
point tie it to the workflow run.
"""

from __future__ import annotations

import csv
import datetime
import json
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

from rocrate.model.contextentity import ContextEntity

from snnbench import hashing, paths
from snnbench.jsonfile import DamagedFile, read_json

# Files in the crate no larger than this are copied in; larger ones are described by their digest alone.
INPUT_COPY_LIMIT_BYTES = 64 * 2**20
# Snakemake's benchmark columns kept as resource usage: column -> (name, QUDT unit or None).
BENCHMARK = {
    "s": ("job wall time", "https://qudt.org/vocab/unit/SEC"),
    "max_rss": ("job peak resident memory", "https://qudt.org/vocab/unit/MebiBYTE"),
    "cpu_time": ("job CPU time", "https://qudt.org/vocab/unit/SEC"),
    "mean_load": ("job mean CPU load", "https://qudt.org/vocab/unit/PERCENT"),
}
STATUS = {"ok": "http://schema.org/CompletedActionStatus"}
FAILED = "http://schema.org/FailedActionStatus"
FORMATS = {
    ".json": "application/json",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".npz": "application/zip",
    ".yaml": "application/yaml",
    ".smk": "text/x-snakemake",
    ".html": "text/html",
    ".png": "image/png",
    ".pdf": "application/pdf",
}


class Execution(NamedTuple):
    """One point: the tool's execution, the step's execution that ran it, and the point's record."""

    action: object
    control: object
    record: dict


def add_file(crate, path: str, dest: str | None = None, **properties):
    """A file of the crate (copied when the crate is written) with its digest, size and format."""
    source = Path(path)
    return crate.add_file(
        source,
        dest or path,
        properties={
            "name": source.name,
            "sha256": hashing.file_sha256(source),
            "contentSize": str(source.stat().st_size),
            "encodingFormat": FORMATS.get(source.suffix, "text/plain"),
            **properties,
        },
    )


def add_points(crate, workflow, rule: str, outputs: list[str], entities: dict) -> list[Execution]:
    """An execution for every record among `entities` (path -> file entity). Damaged records are left
    out (the crate holds them as files)."""
    records = {}
    for path in sorted(p for p in entities if Path(p).name == "record.json"):
        try:
            records[str(Path(path).parent)] = read_json(path)
        except DamagedFile:
            continue
    tools = _tools(crate, rule, records, workflow["version"])
    step = crate.add(
        ContextEntity(
            crate, f"#step/{rule}", properties={"@type": "HowToStep", "name": rule, "workExample": list(tools.values())}
        )
    )
    workflow["hasPart"] = list(tools.values())
    workflow["step"] = [step]
    executions = [_execution(crate, step, tools, rule, outputs, entities, point, rec) for point, rec in records.items()]
    for name in ("spec.json", *outputs):
        values = [entities[f"{point}/{name}"] for point in records if f"{point}/{name}" in entities]
        if values:
            connect(crate, tools, "input" if name == "spec.json" else "output", name, values)
    return executions


def _execution(crate, step, tools: dict, rule: str, outputs: list[str], entities: dict, point: str, rec: dict):
    object_ = [entities[f] for f in [f"{point}/spec.json"] if f in entities] + _inputs(crate, rec)
    result = [entities[f] for f in _results(point, rec, outputs) if f in entities]
    action = crate.add_action(
        tools[_environment_key(rec)], f"#{rule}/{point}", object=object_, result=result, properties=_facts(rec)
    )
    for key, values in (
        ("resourceUsage", _resource_usage(crate, action.id, rec, paths.point_benchmark(point))),
        ("environment", _environment(crate, action.id, rec)),
    ):
        if values:
            action[key] = values
    control = crate.add(
        ContextEntity(
            crate,
            f"#control/{rule}/{point}",
            properties={
                "@type": "ControlAction",
                "name": f"orchestrate {rule} for {point}",
                "instrument": step,
                "object": action,
                "actionStatus": action["actionStatus"],
            },
        )
    )
    return Execution(action, control, rec)


def connect(crate, owners, direction: str, name: str, examples: list) -> None:
    """A FormalParameter `name` of `owners` (the workflow, or the tools: dict or entity) in `direction`
    (input / output), with the files that were its values."""
    owners = list(owners.values()) if isinstance(owners, dict) else [owners]
    key = owners[0].id.strip("#").replace("/", "-")
    parameter = crate.add_formal_parameter(
        name, "File", identifier=f"#param/{key}/{direction}/{name}", properties={"workExample": examples}
    )
    for example in examples:
        example.append_to("exampleOfWork", parameter)
    for owner in owners:
        owner.append_to(direction, parameter)


def _environment_key(rec: dict) -> str:
    return hashing.canonical_hash(_packages(rec))


def _packages(rec: dict) -> dict[str, str]:
    """The packages the point ran with: its build's pip freeze where it has one, else the versions its record names."""
    prov = rec.get("provenance", {})
    frozen = (prov.get("build") or {}).get("pip_freeze") or []
    pins = dict(line.split("==", 1) for line in frozen if "==" in line)
    named = {k: v for k, v in (prov.get("packages") or {}).items() if isinstance(v, str) and k != "note"}
    return dict(sorted({**named, **pins}.items()))


def _tools(crate, rule: str, records: dict, workflow_version: str) -> dict:
    """One tool per environment the rule ran in (environment key -> SoftwareApplication); its version the
    workflow's (the rule is part of it)."""
    by_key = defaultdict(list)
    for rec in records.values():
        by_key[_environment_key(rec)].append(rec)
    tools = {}
    for key, recs in sorted(by_key.items()):
        packages = _packages(recs[0])
        requirements = [
            crate.add(
                ContextEntity(
                    crate,
                    url,
                    properties={"@type": "SoftwareApplication", "name": package, "version": release, "url": url},
                )
            )
            for package, release in packages.items()
            for url in [f"https://pypi.org/project/{package}/{release}/"]
        ]
        tool_id = f"#{rule}" if len(by_key) == 1 else f"#{rule}/environment-{key}"
        tools[key] = crate.add(
            ContextEntity(
                crate,
                tool_id,
                properties={
                    "@type": "SoftwareApplication",
                    "name": rule,
                    "version": workflow_version,
                    "description": f"The Snakemake rule that runs one point, in environment {key} (its packages)",
                    "softwareRequirements": requirements,
                },
            )
        )
    return tools


def _results(point: str, rec: dict, outputs: list[str]) -> list[str]:
    hardware = [f"{point}/{name}" for name in rec.get("hardware") or []]
    return [f"{point}/{name}" for name in outputs] + hardware + [paths.point_benchmark(point)]


def _inputs(crate, rec: dict) -> list:
    """The input files the point's processes read (path -> SHA-256 in its record's identity): each copied in
    where it is still here with that digest and not too large, else described by the digest alone."""
    found = []
    for path, digest in ((rec.get("provenance", {}).get("identity") or {}).get("inputs") or {}).items():
        source = Path(path)
        here = source.is_file() and source.stat().st_size <= INPUT_COPY_LIMIT_BYTES
        if here and hashing.file_sha256(source) == digest:
            inside = not source.is_absolute() and ".." not in source.parts
            dest = path if inside else f"inputs/{digest[:16]}/{source.name}"
            found.append(add_file(crate, path, dest, description="An input file the point read"))
        else:
            found.append(
                crate.add(
                    ContextEntity(
                        crate,
                        f"#input/{digest}",
                        properties={
                            "@type": "CreativeWork",
                            "name": path,
                            "sha256": digest,
                            "description": "An input file the point read, not in this crate: its digest as read",
                        },
                    )
                )
            )
    return found


def _facts(rec: dict) -> dict:
    """The action's name, times, status and where it ran, from the record."""
    prov = rec.get("provenance", {})
    point = rec.get("point", {})
    facts = {"name": f"point {point.get('path', '?')}", "actionStatus": STATUS.get(rec.get("status"), FAILED)}
    if rec.get("status") != "ok":
        reason = (rec.get("failure") or {}).get("reason", "no reason recorded")
        facts["error"] = f"{rec.get('status')}: {reason}"
    started = prov.get("started_utc")
    if started:
        facts["startTime"] = started
        if rec.get("wall_time_s") is not None:
            end = datetime.datetime.fromisoformat(started) + datetime.timedelta(seconds=rec["wall_time_s"])
            facts["endTime"] = end.isoformat(timespec="seconds")
    machine = (prov.get("machine") or {}).get("name") or (prov.get("host") or {}).get("hostname")
    if machine:
        facts["location"] = machine
    workflow = prov.get("workflow") or {}
    facts["description"] = (
        f"Seed {point.get('seed')}, resources {json.dumps(point.get('resources'))}; recorded by workflow commit "
        f"{workflow.get('git_commit')}{' with changes' if workflow.get('git_dirty') else ''}; "
        f"benchmark_hash {prov.get('benchmark_hash')}"
    )
    return facts


def _measure(crate, action_id: str, key: str, name: str, value, unit: str | None):
    properties = {"@type": "PropertyValue", "name": name, "propertyID": f"urn:snnbench:{key}", "value": str(value)}
    if unit:
        properties["unitCode"] = unit
    return crate.add(ContextEntity(crate, f"{action_id}/usage/{key}", properties=properties))


def _resource_usage(crate, action_id: str, rec: dict, benchmark: str) -> list:
    """The record's wall time and peak memory, and Snakemake's benchmark of the job where it is here."""
    usage = []
    if rec.get("wall_time_s") is not None:
        usage.append(
            _measure(
                crate, action_id, "record/wall_time_s", "execute step wall time", rec["wall_time_s"], BENCHMARK["s"][1]
            )
        )
    peak = (rec.get("memory") or {}).get("peak_rss_mb_sum")
    if peak is not None:
        usage.append(
            _measure(
                crate,
                action_id,
                "record/peak_rss_mb_sum",
                "peak resident memory of the ranks",
                peak,
                BENCHMARK["max_rss"][1],
            )
        )
    if Path(benchmark).is_file():
        with open(benchmark, newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        for column, (name, unit) in BENCHMARK.items():
            if rows and rows[-1].get(column) not in (None, "", "NA", "-"):
                usage.append(_measure(crate, action_id, f"snakemake-benchmark/{column}", name, rows[-1][column], unit))
    return usage


def _environment(crate, action_id: str, rec: dict) -> list:
    """The environment variables the record kept (threading, MPI, scheduler)."""
    variables = (rec.get("provenance", {}).get("environment")) or {}
    return [
        crate.add(
            ContextEntity(
                crate,
                f"{action_id}/environment/{name}",
                properties={"@type": "PropertyValue", "name": name, "value": str(value)},
            )
        )
        for name, value in sorted(variables.items())
        if name != "note"
    ]
