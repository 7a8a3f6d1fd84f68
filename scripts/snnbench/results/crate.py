"""A finished experiment as a Workflow Run RO-Crate (Provenance Run Crate 0.5, https://w3id.org/ro/wfrun/provenance/0.5),
written with rocrate (ro-crate-py): what someone outside can check without our code.

The crate keeps the repository's layout (Snakefile, workflow/rules/, config/, results/<experiment>/...,
benchmarks/execute/...) and holds: the workflow (the Snakefile as the main ComputationalWorkflow, with the
git commit as its version; the rule files beside it), the config files, the experiment's tables and each
point's files with their SHA-256 and size. Each point is one execution of the execute rule
(snnbench.results.crate_points): a CreateAction with its spec as object and its record and outputs as
result, timed from the record, run by a ControlAction of the execute step, all orchestrated by Snakemake's
OrganizeAction, whose result is the CreateAction of the workflow run (config files in, tables out).
docs/results.md ("A run as an RO-Crate") maps every part.
"""

from __future__ import annotations

import datetime
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from rocrate.model.contextentity import ContextEntity
from rocrate.rocrate import ROCrate

from snnbench import hashing
from snnbench.records import provenance
from snnbench.results import crate_points

RO_CRATE_VERSION = "1.1"  # the RO-Crate version the Workflow Run Crate profiles 0.5 are built on
PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": ("Process Run Crate", "0.5"),
    "https://w3id.org/ro/wfrun/workflow/0.5": ("Workflow Run Crate", "0.5"),
    "https://w3id.org/ro/wfrun/provenance/0.5": ("Provenance Run Crate", "0.5"),
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": ("Workflow RO-Crate", "1.0"),
}
# Terms the RO-Crate 1.1 context lacks, defined in the crate's own @context (RO-Crate's ad hoc terms): the
# workflow-run namespace's, as the profiles use them, and schema.org's digest of a file.
EXTRA_TERMS = {
    "environment": "https://w3id.org/ro/terms/workflow-run#environment",
    "resourceUsage": "https://w3id.org/ro/terms/workflow-run#resourceUsage",
    "sha256": "http://schema.org/sha256",
}
# The crate's license (an SPDX identifier or a URL), from the environment: `make crate CRATE_LICENSE=CC-BY-4.0`.
LICENSE_ENV = "SNNBENCH_CRATE_LICENSE"
TABLES = {"points.csv": "points table", "ranks.csv": "ranks table", "validation.csv": "validation table"}


@dataclass
class Run:
    """What a crate describes: one experiment's files, paths relative to the working directory."""

    experiment: str
    files: list[str]  # the tables, each point's files, Snakemake's benchmarks
    workflow_files: list[str]  # the Snakefile first, then the files it includes
    configfiles: list[str]
    execute_rule: str  # the rule that runs a point of the experiment's family
    outputs: list[str] = field(default_factory=lambda: ["record.json"])  # what that rule writes per point
    description: str | None = None


def write(out: Path, run: Run, license_id: str | None = None) -> dict:
    """Write the crate of `run` as the folder `out` (made beside it, then moved into place); returns what
    it holds (summary)."""
    crate = ROCrate(version=RO_CRATE_VERSION)
    crate.metadata.extra_terms.update(EXTRA_TERMS)
    entities = {path: crate_points.add_file(crate, path) for path in sorted(set(run.files)) if Path(path).is_file()}
    workflow = _workflow(crate, run)
    _root(crate, run, workflow, license_id)
    executions = crate_points.add_points(crate, workflow, run.execute_rule, run.outputs, entities)
    _workflow_run(crate, run, workflow, executions, entities)
    _single_values(crate)
    out, tmp = Path(out), Path(f"{out}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    crate.write(tmp)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return summary(crate.metadata.generate())


def in_crate(path: str) -> str:
    """Where a file goes in the crate: its path below the working directory, else outside/<digest>/<name>."""
    relative = os.path.relpath(Path(path).absolute())
    if relative.startswith(".."):
        return f"outside/{hashing.file_sha256(Path(path))[:16]}/{Path(path).name}"
    return relative


def _workflow(crate: ROCrate, run: Run):
    """The Snakefile as the main workflow, at the commit of this checkout; the files it includes beside it."""
    main, *included = run.workflow_files
    version = provenance.workflow_version()
    described = "snnbench's Snakemake workflow" + (" (with changes not committed)" if version["git_dirty"] else "")
    properties = {
        "@type": ["File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"],  # HowTo: it has steps
        "name": "snnbench",
        "version": version["git_commit"] or "unknown (not a git checkout)",
        "description": described,
        "sha256": hashing.file_sha256(Path(main)),
        "encodingFormat": crate_points.FORMATS[".smk"],
        "conformsTo": {"@id": "https://bioschemas.org/profiles/ComputationalWorkflow/1.0-RELEASE"},
    }
    snakemake = _version("snakemake")
    workflow = crate.add_workflow(
        main, in_crate(main), main=True, lang="snakemake", lang_version=snakemake, properties=properties
    )
    for path in included:
        crate_points.add_file(crate, path, in_crate(path), description="A file the Snakefile includes")
    return workflow


def _root(crate: ROCrate, run: Run, workflow, license_id: str | None) -> None:
    root = crate.root_dataset
    root["name"] = f"snnbench run of experiment {run.experiment}"
    root["description"] = run.description or f"The workflow, its config and results of experiment {run.experiment}"
    root["datePublished"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    root["license"] = _license(crate, license_id)
    root["conformsTo"] = [
        crate.add(ContextEntity(crate, uri, properties={"@type": "CreativeWork", "name": name, "version": version}))
        for uri, (name, version) in PROFILES.items()
    ]
    root["mainEntity"] = workflow


def _license(crate: ROCrate, license_id: str | None):
    """The license named (an SPDX identifier or a URL), else an entity saying that none was chosen."""
    if not license_id:
        return crate.add(
            ContextEntity(
                crate,
                "#license-not-chosen",
                properties={
                    "@type": "CreativeWork",
                    "name": "No license chosen",
                    "description": f"Whoever made this crate named no license ({LICENSE_ENV}): ask before reuse.",
                },
            )
        )
    uri = license_id if "://" in license_id else f"https://spdx.org/licenses/{license_id}"
    return crate.add(ContextEntity(crate, uri, properties={"@type": "CreativeWork", "name": license_id}))


def _workflow_run(crate: ROCrate, run: Run, workflow, executions: list, entities: dict) -> None:
    """The workflow run (config files in, tables out) and Snakemake's run that orchestrated the points."""
    configs = [
        crate_points.add_file(crate, path, in_crate(path), description="A config file of the run")
        for path in run.configfiles
    ]
    tables = [entity for path, entity in entities.items() if Path(path).name in TABLES]
    crate_points.connect(crate, workflow, "input", "config file", configs)
    for table in tables:
        crate_points.connect(crate, workflow, "output", TABLES[table["name"]], [table])
    actions = [e.action for e in executions]
    starts = [a["startTime"] for a in actions if a.get("startTime")]
    ends = [a["endTime"] for a in actions if a.get("endTime")]
    run_action = crate.add_action(
        workflow,
        "#workflow-run",
        object=configs,
        result=tables,
        properties={
            "name": f"Run of snnbench on experiment {run.experiment}",
            "description": f"{len(actions)} points, from the config files to the experiment's tables",
            **({"startTime": min(starts)} if starts else {}),
            **({"endTime": max(ends)} if ends else {}),
        },
    )
    version = _engine_version(executions)
    engine = crate.add(
        ContextEntity(
            crate,
            f"https://pypi.org/project/snakemake/{version}/",
            properties={
                "@type": "SoftwareApplication",
                "name": "Snakemake",
                "version": version,
                "url": "https://snakemake.github.io",
            },
        )
    )
    organize = crate.add_action(
        engine,
        "#snakemake-run",
        object=[e.control for e in executions],
        result=run_action,
        properties={"@type": "OrganizeAction", "name": f"Snakemake's run of experiment {run.experiment}"},
    )
    crate.root_dataset["mentions"] = [run_action, organize, *actions]


def _engine_version(executions: list) -> str:
    """The Snakemake the points' records name (the most common), else the one installed here."""
    named = Counter(
        v for e in executions if (v := (e.record.get("provenance", {}).get("packages") or {}).get("snakemake"))
    )
    return named.most_common(1)[0][0] if named else _version("snakemake")


def _single_values(crate: ROCrate) -> None:
    """A property of one value as that value, not a list of one (RO-Crate 1.1's JSON-LD recommendation)."""
    for entity in crate.get_entities():
        properties = entity.properties()
        for key, value in properties.items():
            if isinstance(value, list) and len(value) == 1 and not key.startswith("@"):
                properties[key] = value[0]


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def summary(graph_document: dict) -> dict:
    """How many entities a crate's metadata holds, and how many of each type (an entity of several types
    counts for each)."""
    counts = Counter()
    for entity in graph_document["@graph"]:
        counts.update(entity["@type"] if isinstance(entity["@type"], list) else [entity["@type"]])
    return {"entities": len(graph_document["@graph"]), "by_type": dict(sorted(counts.items()))}
