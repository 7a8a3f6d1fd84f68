"""The names of the figure panels, read from the figure modules' source: each function that a module
of snnbench.figures registers with `@panel(...)` (snnbench.figures.registry.PANELS holds the same
names once the modules are imported; tests/unit/test_figures.py proves it). Planning checks a config's
panel names against them without importing the figure modules and matplotlib.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

FIGURES = Path(__file__).resolve().parents[1] / "figures"


@cache
def names() -> tuple[str, ...]:
    """Every registered panel's name, in the order of the modules' files and their source."""
    found = []
    for path in sorted(FIGURES.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and any(_is_panel(d) for d in node.decorator_list):
                found.append(node.name)
    return tuple(found)


def _is_panel(decorator: ast.expr) -> bool:
    call = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(call, ast.Name) and call.id == "panel"
