"""The registries' strings as imports: `make lint` (python -m snnbench.dev.registry_imports).

The registries name modules as strings, loaded with importlib where used (the families, the network
models and simulators, a model's builders and description module, plugins named by the SNNBENCH_*
variables), which import-linter cannot see. This check resolves every string to a module (and its
attribute, read from the source: no backend is imported) and runs pyproject's contracts on the
import graph with each string added as an import of the module that names it. It prints the
contracts' report and the count of resolved targets; it fails on a string that resolves to nothing
or a contract that does not hold.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import os
import sys
from dataclasses import dataclass

from snnbench import families
from snnbench.network import models, simulators
from snnbench.paths import REPO


@dataclass(frozen=True)
class Edge:
    importer: str  # the module that holds the string
    string: str  # "module" or "module:attribute"
    where: str  # which registry names it

    @property
    def module(self) -> str:
        return self.string.partition(":")[0]


def edges() -> list[Edge]:
    """Every registry string, with the module that names it (plugins' included: the variables as set)."""
    found = [Edge("snnbench.families", s, "families.FAMILIES") for s in families.FAMILIES.values()]
    found += [
        Edge("snnbench.families", s, f"families.{name}")
        for name, s in [
            ("NETWORK", families.NETWORK),
            ("NETWORK_MODELS", families.NETWORK_MODELS),
            ("NETWORK_SCHEMA", families.NETWORK_SCHEMA),
            ("NETWORK_SIMULATORS", families.NETWORK_SIMULATORS),
        ]
    ]
    for name, string in models.registered().items():
        found.append(Edge("snnbench.network.models", string, f"models ({name})"))
        model = models.get(name)
        owner = type(model).__module__
        found += [Edge(owner, s, f"model {name}'s builders ({sim})") for sim, s in model.builders.items()]
        if model.description_module:
            found.append(Edge(owner, model.description_module, f"model {name}'s description_module"))
    plugins = os.environ.get(simulators.EXTRA_VARIABLE, "")
    for item in filter(None, (i.strip() for i in plugins.split(","))):
        name, _, string = item.partition("=")
        found.append(Edge("snnbench.network.simulators", string, f"simulators ({name}, {simulators.EXTRA_VARIABLE})"))
    for name, simulator in simulators.registered().items():
        found += [
            Edge("snnbench.network.simulators", s, f"simulator {name} ({m})") for m, s in simulator.builders.items()
        ]
        if simulator.options_schema:
            where = f"simulator {name}'s options_schema"
            found.append(Edge("snnbench.network.simulators", simulator.options_schema, where))
        if simulator.option_check:
            found.append(
                Edge("snnbench.network.simulators", simulator.option_check, f"simulator {name}'s option_check")
            )
    return found


def resolves(edge: Edge) -> bool:
    """The string's module exists (found on the path without importing it) and defines its attribute."""
    module, _, attribute = edge.string.partition(":")
    try:
        spec = importlib.util.find_spec(module) if "." not in module else _find_nested(module)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    if not attribute:
        return True
    tree = ast.parse(open(spec.origin).read())
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            defined |= {a.asname or a.name for a in node.names}
    return attribute in defined


def _find_nested(module: str):
    """A module's spec from its package's path, without running the packages' __init__ (a backend's
    package may import its simulator)."""
    top, *rest = module.split(".")
    spec = importlib.util.find_spec(top)
    for part in rest:
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(f"{spec.name}.{part}", list(spec.submodule_search_locations))
    return spec


class _WithRegistries:
    """import-linter's graph builder, then the registries' strings added as imports."""

    def __init__(self, builder, found: list[Edge]):
        self.builder, self.found = builder, found

    def build(self, **kwargs):
        graph = self.builder.build(**kwargs)
        for edge in self.found:
            if edge.module == edge.importer:  # a plugin naming its own class
                continue
            if edge.module not in graph.modules:
                graph.add_module(edge.module)
            graph.add_import(
                importer=edge.importer,
                imported=edge.module,
                line_number=0,
                line_contents=f"{edge.where}: {edge.string}",
            )
        return graph


def main() -> int:
    """Prints import-linter's report on the graph with the registries' strings, then the count of them."""
    from importlinter.application import use_cases
    from importlinter.application.app_config import settings
    from importlinter.configuration import configure

    found = edges()
    unresolved = [edge for edge in found if not resolves(edge)]
    for edge in unresolved:
        print(f"{edge.importer}: {edge.where} names {edge.string!r}, which resolves to nothing", file=sys.stderr)
    configure()
    settings.configure(GRAPH_BUILDER=_WithRegistries(settings.GRAPH_BUILDER, found))
    kept = use_cases.lint_imports(config_filename=str(REPO / "pyproject.toml"), cache_dir=None, no_logo=True)
    print(f"Registry strings resolved and checked as imports: {len(found) - len(unresolved)} of {len(found)}")
    return 0 if kept == use_cases.SUCCESS and not unresolved else 1


if __name__ == "__main__":
    sys.exit(main())
