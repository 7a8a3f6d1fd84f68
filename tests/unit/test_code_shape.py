"""The code's shape: modules and functions small, test modules named apart. Which module may import
which (no family outside its package, no cycles) is import-linter's: tests/e2e/test_lint.py."""

import ast

from conftest import LONGEST_FIRST, REPO


def code_files():
    for path in [
        REPO / "workflow" / "Snakefile",
        *(REPO / "scripts").rglob("*.py"),
        *(REPO / "workflow").rglob("*.smk"),
    ]:
        if "egg-info" not in str(path):
            yield path, str(path.relative_to(REPO))


def test_modules_under_400_lines_and_functions_under_60():
    too_long = []
    for path, name in code_files():
        source = path.read_text()
        if path.suffix == ".py":
            if len(source.splitlines()) > 400:
                too_long.append(f"{name}: {len(source.splitlines())} lines")
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno >= 60:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert too_long == []


def test_test_modules_have_distinct_names():
    """pytest imports test modules by their base name (no packages under tests/): two of the same
    name in unit/ and e2e/ stop the whole run at collection."""
    names = [path.name for path in (REPO / "tests").rglob("test_*.py")]
    assert sorted(names) == sorted(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_the_longest_test_files_named_for_the_workers_exist():
    # A renamed file would silently drop out of the order make test hands files to its workers in.
    assert [name for name in LONGEST_FIRST if not (REPO / "tests" / name).is_file()] == []
