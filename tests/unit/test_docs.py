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


# --- every module path named in docs, comments and docstrings exists ---------------------------

PACKAGE = REPO / "scripts" / "snnbench"
NAMED_IN = [
    REPO / "README.md",
    REPO / "Makefile",
    REPO / "workflow" / "Snakefile",
    REPO / "config" / "README.md",
    *sorted((REPO / "config").rglob("*.yaml")),
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "envs").glob("*.yaml")),
    *sorted((REPO / "workflow").rglob("*.smk")),
    *sorted((REPO / "scripts").rglob("*.py")),
    *sorted((REPO / "tests").rglob("*.py")),
]
# Names a test makes up to test a refusal, not paths meant to exist.
INVENTED = {"snnbench.a.b"}


def module_names(path) -> set[str]:
    """The top-level names a module defines (functions, classes, assignments, imports), and for each
    class `Class.name` of its body."""
    import ast

    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names |= {f"{node.name}.{n}" for n in _class_names(node)}
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _class_names(node) -> set[str]:
    import ast

    found = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(item.name)
        elif isinstance(item, ast.Assign | ast.AnnAssign):
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def resolves(dotted: str) -> bool:
    """snnbench.a.b[.name[.attr]]: a module or package of the package, then names it defines."""
    parts = dotted.split(".")[1:]
    path, used = PACKAGE, 0
    while used < len(parts) and ((path / parts[used]).is_dir() or (path / f"{parts[used]}.py").exists()):
        path = path / parts[used] if (path / parts[used]).is_dir() else path / f"{parts[used]}.py"
        used += 1
    rest = ".".join(parts[used:])
    if not rest or re.fullmatch(r"__\w+__", rest):
        return True
    module = path / "__init__.py" if path.is_dir() else path
    return module.exists() and rest in module_names(module)


@pytest.mark.parametrize("path", NAMED_IN, ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_path_named_exists(path):
    text = path.read_text()
    named = set(re.findall(r"\bsnnbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text)) - INVENTED
    files = set(re.findall(r"\bscripts/snnbench/[\w/]+\.py\b", text))
    missing = sorted(name for name in named if not resolves(name))
    missing += sorted(file for file in files if not (REPO / file).exists())
    assert not missing, f"{path.relative_to(REPO)} names what does not exist: {missing}"


# --- rules stated once: the docs quote the code's constants ---------------------------------------

WORDS = {"two": 2, "three": 3, "four": 4}


def quoted_constants():
    """(doc, the text that quotes a constant, its value there, the constant's value in the code)."""
    from snnbench.machine import interference
    from snnbench.network.judging import ensemble, group_verdict

    figures, binding = REPO / "docs" / "figures.md", REPO / "docs" / "binding.md"
    return [
        (figures, r"With fewer than (\w+) reference runs besides", WORDS, ensemble.MIN_MEMBERS),
        (figures, r"`snnbench.network.judging.ensemble.MIN_MEMBERS` = (\d+)", int, ensemble.MIN_MEMBERS),
        (figures, r"(\d+) random relabellings of the runs", int, group_verdict.PERMUTATIONS),
        (figures, r"relabellings of the runs .*? at level ([\d.]+)", float, group_verdict.ALPHA),
        (binding, r"disturbed where others took more than ([\d.]+) of", float, interference.DISTURBED_ABOVE),
    ]


@pytest.mark.parametrize("doc, pattern, read, value", quoted_constants(), ids=lambda v: getattr(v, "name", None))
def test_the_docs_quote_the_codes_constants(doc, pattern, read, value):
    found = re.search(pattern, " ".join(doc.read_text().split()), re.DOTALL)
    assert found, f"{doc.name} no longer says {pattern!r}"
    quoted = read[found.group(1)] if isinstance(read, dict) else read(found.group(1))
    assert quoted == value, f"{doc.name} quotes {quoted} where the code has {value}"
