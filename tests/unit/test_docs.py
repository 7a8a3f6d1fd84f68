"""The README and docs/ point at what exists: every relative link at a file (and a heading where
it names one), every `make <target>` at a target of the Makefile."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TARGETS = set(re.findall(r"^([A-Za-z0-9_.%-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))


def anchors(path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    headings = re.findall(r"^#+ (.*)$", path.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_point_at_files_and_headings(doc):
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        assert path.exists(), f"{doc.name}: link to missing {target}"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{doc.name}: link to missing heading {target}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_make_targets_named_exist(doc):
    named = set(re.findall(r"`make ([a-z][\w-]*)", doc.read_text()))
    missing = {
        t for t in named if t not in TARGETS and not any(p.endswith("%") and t.startswith(p[:-1]) for p in TARGETS)
    }
    assert not missing, f"{doc.name} names make targets the Makefile lacks: {sorted(missing)}"
