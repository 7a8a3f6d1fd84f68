"""A module build whose modules form a hierarchy, as EasyBuild lays them out (a compiler's module adds
the folder of the MPIs built with it, an MPI's the folder of what was built with both), with either
tool that reads modulefiles: Lmod (Lua modulefiles) and Environment Modules (Tcl ones). Checked the way
they load, in order, naming the first that cannot be loaded and the loads before it; loaded and
recorded alike by both. Which tool: the one set up, else the one installed (snnbench.machine.module_tools)."""

from __future__ import annotations

import dataclasses
import os
import subprocess

import pytest
from conftest import (
    HIERARCHY,
    REPO,
    VENV_BIN,
    WITHDRAWN,
    config_problems,
    environment_modules,
    experiment,
    module_hierarchy,
)
from snnbench import planning
from snnbench.environments import builds
from snnbench.machine import hardware, lmod, module_tools, modules


@pytest.fixture(params=["lmod", "environment-modules"])
def tool(request, monkeypatch) -> modules.Tool:
    """The tool of the site this test plays: the other one not set up, nothing of the user's modules."""
    for variable in ("LMOD_CMD", "MODULES_CMD", "MODULEPATH", "LOADEDMODULES", "_LMFILES_"):
        monkeypatch.delenv(variable, raising=False)
    if request.param == "lmod" and lmod.LMOD.command() is None:
        pytest.skip("Lmod is not installed: make test installs Debian's lmod (as root)")
    if request.param == "environment-modules":
        monkeypatch.setenv("MODULES_CMD", environment_modules())
    found = module_tools.tool()
    assert found.key == request.param
    return found


@pytest.fixture
def tree(tool, tmp_path) -> dict:
    return module_hierarchy(tmp_path / "modules", "lua" if tool is lmod.LMOD else "tcl", VENV_BIN)


def site(tree, modules_: list[str]) -> dict:
    return {"site": {"modules": modules_, "modulepath": [str(tree["core"])]}}


def test_a_hierarchy_is_checked_in_the_order_it_loads(tree):
    assert config_problems(experiment(builds=site(tree, HIERARCHY))) == []
    assert config_problems(experiment(builds=site(tree, ["GCC/13", "ParaStationMPI/5"]))) == []


@pytest.mark.parametrize(
    "asked, before, searched",
    [
        (["GCC/13", "NEST/3.9"], ["GCC/13"], ["compiler", "core"]),
        (["GCC/13", "ParaStationMPI/5", "NEST/3.9"], ["GCC/13", "ParaStationMPI/5"], ["psmpi", "compiler", "core"]),
        (["OpenMPI/4", "NEST/3.9"], [], ["core"]),
    ],
)
def test_the_first_module_not_found_is_named_with_the_loads_before_it(tree, asked, before, searched):
    found = config_problems(experiment(builds=site(tree, asked)))
    after = f" after module load {' '.join(before)}" if before else ""
    where = ":".join(str(tree[folder]) for folder in searched)
    said = f"builds.site.modules: module {asked[len(before)]} is not available{after} (MODULEPATH={where};"
    assert len(found) == 1 and said in found[0], found


def test_a_module_that_fails_to_load_is_named_with_the_tools_words(tree):
    found = config_problems(experiment(builds=site(tree, ["GCC/13", "BrokenMPI/1", "NEST/3.9"])))
    assert len(found) == 1, found
    assert "builds.site.modules: module BrokenMPI/1 cannot be loaded after module load GCC/13: " in found[0]
    assert WITHDRAWN in found[0], found


def test_loading_a_hierarchy_records_it_and_its_nest_imports(tool, tree):
    build = builds.point_build("nest", "nest-simulator", "site", site(tree, HIERARCHY)["site"])
    environ, loaded = module_tools.load(build)
    assert set(loaded) == {"tool", "module_list", "loaded", "files", "modulepath", tool.version_key, "load_s"}
    assert loaded["tool"] == tool.key and loaded[tool.version_key][0].isdigit()
    assert loaded["loaded"] == loaded["module_list"] == HIERARCHY
    extension = ".lua" if tool is lmod.LMOD else ""
    homes = [tree["core"], tree["compiler"], tree["openmpi"]]
    assert loaded["files"] == [f"{home / name}{extension}" for home, name in zip(homes, HIERARCHY, strict=True)]
    assert loaded["modulepath"] == f"{tree['openmpi']}:{tree['compiler']}:{tree['core']}"
    assert environ["NEST_MODULE"] == "1" and modules.python(environ) == str(VENV_BIN / "python3")
    version = "import nest; print(nest.__version__)"
    ran = subprocess.run([modules.python(environ), "-c", version], env=environ, capture_output=True, text=True)
    assert ran.stdout.strip().splitlines()[-1].startswith("3.10"), ran.stderr[-2000:]
    with pytest.raises(modules.ModulesError, match=r"module load GCC/13 NEST/3\.9 failed: "):
        module_tools.load(dict(build, modules=["GCC/13", "NEST/3.9"]))


def test_the_points_module_list_is_the_tools(tool, tree, monkeypatch):
    """The hardware record's `module list`, in a process started with the modules loaded: `module`
    defined from the tool's command (the point inherits variables, not the shell's function)."""
    environ, _ = module_tools.load(builds.point_build("nest", "nest-simulator", "site", site(tree, HIERARCHY)["site"]))
    for name in set(os.environ) - set(environ):
        monkeypatch.delenv(name)
    for name, value in environ.items():
        if not name.startswith("BASH_FUNC_"):
            monkeypatch.setenv(name, value)
    listed = hardware.loaded_modules()
    assert all(module in listed for module in HIERARCHY), listed


def test_the_tool_is_the_one_set_up_else_the_one_installed(tmp_path, monkeypatch):
    commands = {}
    for name in ("lmod", "modulecmd.tcl", "not-executable"):
        commands[name] = tmp_path / name
        commands[name].write_text("#!/bin/sh\n")
        commands[name].chmod(0o755 if name != "not-executable" else 0o644)
    lmod_, tcl = module_tools.TOOLS

    def installed(lmod_at, tcl_at):
        replaced = (dataclasses.replace(lmod_, defaults=(str(lmod_at),)), dataclasses.replace(tcl, defaults=(tcl_at,)))
        monkeypatch.setattr(module_tools, "TOOLS", replaced)

    installed(commands["lmod"], "$MODULESHOME/modulecmd.tcl")
    assert module_tools.detected({}).key == "lmod"  # installed: Lmod first
    assert module_tools.detected({"MODULES_CMD": str(commands["modulecmd.tcl"])}).key == "environment-modules"
    assert module_tools.detected({"MODULES_CMD": str(commands["not-executable"])}).key == "lmod"
    installed(tmp_path / "no-lmod", "$MODULESHOME/modulecmd.tcl")
    assert module_tools.detected({"MODULESHOME": str(tmp_path)}).key == "environment-modules"
    assert module_tools.detected({}) is None
    with pytest.raises(modules.ModulesError, match=r"need environment modules.*\$LMOD_CMD.*\$MODULES_CMD"):
        module_tools.tool({})
    assert module_tools.module_function({"LMOD_CMD": str(commands["lmod"])}) == lmod_.function
    assert module_tools.module_function({}) is None


def test_the_quickstart_example_is_refused_here_only_for_the_sites_modules():
    """docs/site-modules-example.yaml (docs/cluster-quickstart.md) is valid: what stops it here is
    that this machine lacks the site's modules (or a tool to load them)."""
    try:
        planning.plan_files([REPO / "docs" / "site-modules-example.yaml"])
    except planning.ConfigRefused as error:
        problems = error.problems
    else:
        problems = []
    assert problems, "the site's modules exist here?"
    lacking = ("modules: module GCC/13 is not available (", "modules: module builds need environment modules")
    assert all(any(line in problem for line in lacking) for problem in problems), problems
