"""Simulator builds: one simulator run in several named builds (NEST releases, a NEST branch).

An experiment's `builds` names them, e.g. `{nest-3.10.0: {pip: "nest-simulator==3.10.0"},
my-branch: {source: ~/nest-simulator, cmake: {with-mpi: ON}}}`; each point then runs in every
build, at `results/<experiment>/<simulator>@<build>/...` (points of experiments without builds
keep their paths). Each build is a virtual environment that rule build_environment makes once in
a per-user cache shared by checkouts, at <cache>/<key>, where the key is a hash of what defines
the environment: its pip requirements (the pins of the simulator's envs/<environment>.yaml
without the built package, plus the build's own requirement), for a source tree its commit and
uncommitted changes and the CMake options, and the Python. Never the checkout's path. Each
checkout links it as .venv-build-<key> (rule link_environment), as it links named environments.
A build given as the site's environment modules (`modules`, snnbench.machine.modules) has no
environment and no key: its points run with the modules loaded.

This module is pure (spec, key, paths, config checks); snnbench.environments.maker makes the environment.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import subprocess
import tomllib
from pathlib import Path

from snnbench import environments
from snnbench.environments import sources, toolchain
from snnbench.machine import module_tools, modules
from snnbench.paths import REPO

# Tools a source build needs beside the environment's pins (built without isolation, so that CMake
# finds the environment's numpy and, with MPI, mpi4py); as in snnbench.environments.nest_mpi.
SOURCE_BUILD_TOOLS = ("scikit-build-core==1.1.2", "cython==3.3.1", "setuptools==84.2.1", "wheel==0.45.1")
# CMake's own install of a release tree before 3.10 (source_recipe): its pynestkernel.pyx still names Python 2's
# `long`, which Cython 3.1 removed ("undeclared name not builtin: long"), so the last Cython 3.0.
CMAKE_INSTALL_TOOLS = ("cython==3.0.12",)
MPI_ENVIRONMENT = "nest-mpi"  # its mpi4py pin is the one a source build with MPI installs
KEY_PATTERN = r"[0-9a-f]{16}"
LINKED_PREFIX = "build-"  # a build's environment in a checkout: .venv-build-<key>


def label(spec: dict) -> str:
    """The simulator as a point's path and figures name it: `nest`, or `nest@<build>`."""
    build = spec.get("build")
    return f"{spec['simulator']}@{build['name']}" if build else spec["simulator"]


def project_name(requirement: str) -> str:
    """The normalized project name of a requirement (`Nest_Simulator==3.9` -> nest-simulator)."""
    from packaging.requirements import Requirement

    return re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()


def is_modules(build: dict) -> bool:
    """Whether a build is the site's environment modules (no environment is made for it)."""
    return "modules" in build


def requirements(environment: str, package: str, build: dict) -> list[str]:
    """What pip installs into a build's environment: the environment's pins without the built
    package, plus the build's requirement (a pip build) or the tools to build the source tree."""
    kept = [p for p in environments.pins(environment) if project_name(p) != package]
    if "pip" in build:
        return sorted([*kept, build["pip"]])
    extra = list(SOURCE_BUILD_TOOLS if recipe(build) == "wheel" else CMAKE_INSTALL_TOOLS)
    if enabled(build, "with-mpi"):
        extra += [p for p in environments.pins(MPI_ENVIRONMENT) if project_name(p) == "mpi4py"]
    return sorted({*kept, *extra})


def pip(prefix: Path) -> list[str]:
    """pip of the environment at `prefix`, never asking and quiet about its own version."""
    return [str(prefix / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--no-input"]


def cmake_options(build: dict) -> dict[str, str]:
    """CMake options as -D values: booleans as ON / OFF."""
    return {k: ("ON" if v else "OFF") if isinstance(v, bool) else str(v) for k, v in build.get("cmake", {}).items()}


def enabled(build: dict, option: str) -> bool:
    """Whether a source build's CMake options turn `option` on (absent: off)."""
    return cmake_options(build).get(option, "OFF").upper() not in ("OFF", "NO", "FALSE", "0")


def _git(tree: str, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def source_state(tree: str) -> dict:
    """What a source tree holds: its commit, `git describe`, whether it has uncommitted changes
    and a hash of them (tracked files). A tree outside git is known by its path alone."""
    commit = _git(tree, "rev-parse", "HEAD")
    if commit is None:
        return {"git": False, "path": os.path.realpath(tree)}
    diff = _git(tree, "diff", "HEAD") or ""
    return {
        "git": True,
        "commit": commit,
        "describe": _git(tree, "describe", "--tags", "--always", "--dirty"),
        "dirty": bool(diff),
        "diff_sha256": hashlib.sha256(diff.encode()).hexdigest()[:16] if diff else None,
    }


def environment_key(
    requirements: list[str], source: dict | None, cmake: dict, python: str, toolchain: dict | None = None
) -> str:
    """The cache key: everything that defines the environment, nothing about where it is used (the
    toolchain's modules only where it names some: other builds keep their keys)."""
    defined = {
        "requirements": sorted(requirements),
        "source": source,
        "cmake": dict(sorted(cmake.items())),
        "python": python,
        "machine": platform.machine(),
        **({"toolchain": toolchain} if toolchain else {}),
    }
    return environments.content_key(defined)


def third_party(build: dict) -> sources.Source | None:
    """The verified third-party source a `source` build names (e.g. `nest-simulator-3.8`: a release
    tree fetched like GeNN's, snnbench.environments.sources), None for a path or another kind of build."""
    return sources.SOURCES.get(build.get("source", ""))


def recipe(build: dict) -> str:
    """How a `source` build installs its tree: the third-party source's declared recipe (its tree is
    unpacked only when the environment is made), else read from the tree (source_recipe)."""
    named = third_party(build)
    return (named.recipe or "wheel") if named else source_recipe(build["source"])


def _tree_state(build: dict) -> dict:
    """What defines a source build's tree: a third-party source's name and files digest, else the
    tree's git state (source_state)."""
    named = third_party(build)
    if named:
        return {"third_party": named.name, "files_sha256": named.files_sha256, "url": named.url}
    return source_state(build["source"])


@functools.cache
def _point_build(environment: str, package: str, name: str, build_json: str, python: str) -> dict:
    build = json.loads(build_json)
    reqs = requirements(environment, package, build)
    source = _tree_state(build) if "source" in build else None
    entry = {"name": name, **build}
    if source is not None:
        kept = ("commit", "describe", "dirty", "third_party", "files_sha256")
        entry["source_state"] = {k: v for k, v in source.items() if k in kept}
    entry["requirements"] = reqs
    entry["key"] = environment_key(reqs, source, cmake_options(build), python, toolchain.of(build))
    return entry


def point_build(environment: str, package: str, name: str, build: dict) -> dict:
    """The `build` of a point's spec: the configured build, its source tree's state and its key.
    Made once per process for all points of the build: a source tree as it is when the workflow
    plans (a later plan is a new process)."""
    build = dict(build)
    if "source" in build and not third_party(build):
        build["source"] = os.path.realpath(os.path.expanduser(build["source"]))
    if "modulepath" in build:
        build["modulepath"] = modules.folders(build)
    if is_modules(build):
        return {"name": name, **build}
    return _point_build(environment, package, name, json.dumps(build, sort_keys=True), platform.python_version())


def content(build: dict) -> dict:
    """What defines a build's environment, without the name it has in one experiment: the build
    rule's params (another name for the same environment must not remake it)."""
    return {k: v for k, v in build.items() if k != "name"}


def directory(build: dict) -> Path:
    return environments.cached(build["key"])


def marker(build: dict) -> Path:
    """The file that says a build's environment is complete (the build rule's output): its provenance."""
    return environments.made_marker(build["key"])


def linked_name(build: dict) -> str:
    """The build's environment in a checkout: .venv-build-<key>, on the cached one, with the
    checkout's snnbench installed editable (snnbench.environments.maker.link)."""
    return LINKED_PREFIX + build["key"]


def linked_key(name: str) -> str | None:
    """The key of a build's environment from its name in a checkout (None: a named environment)."""
    return name.removeprefix(LINKED_PREFIX) if name.startswith(LINKED_PREFIX) else None


def python(build: dict, repo: Path = REPO) -> str:
    return environments.linked_python(linked_name(build), build["key"], repo)


def provenance(spec: dict) -> dict | None:
    """The build's provenance written when its environment was made (snnbench.environments.maker); for a
    module build, the build as configured (the point adds what it loaded: snnbench.machine.modules.Tool.load)."""
    if "build" not in spec:
        return None
    if is_modules(spec["build"]):
        return {"name": spec["build"]["name"], "build": content(spec["build"])}
    try:
        return json.loads(marker(spec["build"]).read_text())
    except (OSError, ValueError):
        return {"name": spec["build"]["name"], "key": spec["build"]["key"], "missing": str(marker(spec["build"]))}


def _build_problems(where: str, name: str, build: dict, package: str) -> list[str]:
    key = f"{where}: builds.{name}"
    kinds = [kind for kind in ("pip", "source", "modules") if kind in build]
    if len(kinds) != 1:
        return [
            f"{key}: give either `pip` (a requirement, e.g. {package}==3.10.0), `source` (the path of a "
            f"{package} source tree) or `modules` (the site's environment modules), "
            f"{'not ' + ' and '.join(kinds) if kinds else 'neither is given'}"
        ]
    if is_modules(build):
        return _modules_problems(key, build)
    toolchain_problems = _toolchain_problems(key, build)
    if toolchain_problems:
        return toolchain_problems
    if "pip" in build:
        if "cmake" in build:
            return [f"{key}.cmake: CMake options are for `source` builds (a wheel from PyPI is built already)"]
        try:
            named = project_name(build["pip"])
        except ValueError as error:
            return [f"{key}.pip: {build['pip']!r} is not a pip requirement ({error})"]
        return [] if named == package else [f"{key}.pip: {build['pip']!r} does not name {package}"]
    if third_party(build):
        return []  # fetched and verified before any job (snnbench.planning.before_jobs.fetch_sources)
    tree = Path(os.path.expanduser(build["source"]))
    if not tree.is_dir():
        releases = ", ".join(name for name, source in sources.SOURCES.items() if source.recipe)
        return [
            f"{key}.source: {build['source']} is not a directory: give the path of a {package} source tree "
            f"or the name of a release fetched for you ({releases})"
        ]
    if not (tree / "CMakeLists.txt").exists():
        return [f"{key}.source: {build['source']} is not a {package} source tree (no CMakeLists.txt)"]
    return []


def source_recipe(tree: str | Path) -> str:
    """How a source tree is built: `wheel` where its pyproject.toml builds one with scikit-build-core
    (NEST 3.10 on), else `cmake-install`, CMake's own install into the environment (the release trees
    before 3.10, whose pyproject.toml holds tool settings only: pip would fall back to setuptools)."""
    try:
        declared = tomllib.loads((Path(tree) / "pyproject.toml").read_text(errors="replace")).get("build-system", {})
    except (OSError, tomllib.TOMLDecodeError):
        return "cmake-install"
    return "wheel" if str(declared.get("build-backend", "")).startswith("scikit_build_core") else "cmake-install"


def _toolchain_problems(key: str, build: dict) -> list[str]:
    """A `toolchain` (or its `modulepath`) on anything but a `source` build, or a module of it that
    cannot be loaded after those before it (snnbench.environments.toolchain)."""
    if "toolchain" not in build and "modulepath" not in build:
        return []
    if "source" not in build:
        return [f"{key}.toolchain: a toolchain's modules are for `source` builds (a wheel from PyPI is built already)"]
    if "toolchain" not in build:
        return [f"{key}.modulepath: is where `modules` or a `toolchain` are looked for, and the build names neither"]
    try:
        problem = module_tools.unavailable({"modules": build["toolchain"], "modulepath": build.get("modulepath", [])})
    except modules.ModulesError as error:
        return [f"{key}.toolchain: {error}"]
    return [f"{key}.toolchain: {problem}"] if problem else []


def _modules_problems(key: str, build: dict) -> list[str]:
    """A module build's options that belong to the other kinds, no tool to read modulefiles, the
    first module that cannot be loaded after those before it (snnbench.machine.module_tools)."""
    if "cmake" in build:
        return [f"{key}.cmake: CMake options are for `source` builds (the site built its modules)"]
    try:
        problem = module_tools.unavailable(build)
    except modules.ModulesError as error:
        return [f"{key}.modules: {error}"]
    return [f"{key}.modules: {problem}"] if problem else []


def check(where: str, experiment: dict, packages: dict[str, str | None]) -> list[str]:
    """What the schema cannot say about an experiment's `builds`, each problem naming its key:
    a build with none (or several) of pip, source and modules, a module that cannot be loaded after
    those before it (or no tool to load modules), a requirement for another package, a source
    path that is not a source tree, simulators that have no builds, MPI points without MPI builds.
    packages: simulator -> the package its builds replace (None: it has no builds)."""
    builds = experiment.get("builds")
    if not builds:
        return []
    buildable = [name for name, package in packages.items() if package]
    others = [s for s in experiment["simulators"] if s not in buildable]
    if others:
        return [
            f"{where}: builds: simulators {', '.join(others)} have no builds (builds are for {', '.join(buildable)})"
        ]
    package = packages[experiment["simulators"][0]]
    problems = [p for name, build in builds.items() for p in _build_problems(where, name, build, package)]
    resources = experiment["resources"]
    if not problems and max(resources.get("nodes", [1])) * max(resources.get("ranks_per_node", [1])) > 1:
        for name, build in builds.items():
            if is_modules(build):
                continue  # the site's module: built against its MPI, or not; its points say
            if cmake_options(build).get("with-mpi", "OFF").upper() != "ON":
                problems.append(
                    f"{where}: builds.{name}: points with more than one MPI rank need a build with MPI: a `source` "
                    "build with `cmake: {with-mpi: ON}` (the PyPI wheel has none)"
                )
    return problems
