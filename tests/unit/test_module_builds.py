"""Builds given as the site's environment modules (Lmod): the config, the plan (no environment to
make), refusals before any job (a missing module, no tool), and loading them for a point. A module
hierarchy, and Environment Modules: test_module_hierarchy.py."""

from __future__ import annotations

import dataclasses
import os

import pytest
from conftest import MPI_MODULE, NEST_MODULE, config_problems, experiment, module_tree, validated
from snnbench import planning
from snnbench.environments import builds
from snnbench.machine import lmod, module_tools
from snnbench.planning import before_jobs


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.delenv("MODULES_CMD", raising=False)  # Lua modulefiles: Lmod's, not Environment Modules'
    return module_tree(tmp_path / "modules")


def site(tree, *names) -> dict:
    return {"site": {"modules": list(names or [NEST_MODULE]), "modulepath": [str(tree)]}}


def test_a_module_build_plans_its_points_and_no_environment(tree):
    config = validated(experiment(builds=site(tree)))
    specs = planning.expand_points(config["experiments"][0])
    assert {s["path"].split("/")[2] for s in specs} == {"nest@site"}
    assert specs[0]["build"] == {"name": "site", "modules": [NEST_MODULE], "modulepath": [str(tree)]}
    assert planning.plan(config).environments_to_make == {}


def test_a_missing_module_is_refused_naming_the_build_and_the_module(tree):
    found = config_problems(experiment(builds=site(tree, MPI_MODULE, "nest/9.9")))
    assert len(found) == 1, found
    assert f"builds.site.modules: module nest/9.9 is not available after module load {MPI_MODULE} " in found[0]
    assert f"MODULEPATH={tree}" in found[0]


def test_module_builds_need_a_tool_to_load_modules(tree, monkeypatch):
    for tool in module_tools.TOOLS:
        monkeypatch.delenv(tool.variable, raising=False)
    monkeypatch.setattr(module_tools, "TOOLS", tuple(dataclasses.replace(t, defaults=()) for t in module_tools.TOOLS))
    found = config_problems(experiment(builds=site(tree)))
    assert len(found) == 1 and "builds.site.modules: module builds need environment modules" in found[0], found
    assert "$LMOD_CMD" in found[0] and "$MODULES_CMD" in found[0], found


@pytest.mark.parametrize(
    "extra, key, allowed",
    [
        ({"pip": "nest-simulator==3.10.0"}, "builds.site", "not pip and modules"),
        ({"cmake": {"with-mpi": "ON"}}, "builds.site.cmake", "`source` builds"),
        ({"modules": []}, "builds.site.modules", "should be non-empty"),
        ({"modules": ["nest; rm -rf /"]}, "builds.site.modules", "does not match"),
    ],
)
def test_bad_module_builds_are_refused_naming_the_key(tree, extra, key, allowed):
    found = config_problems(experiment(builds={"site": {**site(tree)["site"], **extra}}))
    assert found and key in found[0] and allowed in found[0], found


def test_mpi_points_may_use_a_module_build(tree):
    resources = {"threads_per_rank": [1], "ranks_per_node": [2]}
    assert config_problems(experiment(builds=site(tree), resources=resources)) == []


def test_loading_records_the_modules_with_their_dependencies(tree, monkeypatch):
    monkeypatch.delenv("MODULEPATH", raising=False)
    build = builds.point_build("nest", "nest-simulator", "site", site(tree)["site"])
    environ, loaded = lmod.LMOD.load(build)
    assert loaded["loaded"] == [MPI_MODULE, NEST_MODULE]  # name/version, the dependency first
    assert loaded["module_list"] == [MPI_MODULE, NEST_MODULE]  # `module -t list`
    assert loaded["files"] == [str(tree / f"{MPI_MODULE}.lua"), str(tree / f"{NEST_MODULE}.lua")]
    assert loaded["modulepath"] == str(tree) and loaded["lmod_version"] and loaded["tool"] == "lmod"
    assert environ["NEST_MODULE"] == "1" and module_tools.python(environ).startswith(environ["PATH"].split(":")[0])
    with pytest.raises(module_tools.ModulesError, match=r"module load nest/9\.9 failed: .*unknown"):
        lmod.LMOD.load(dict(build, modules=["nest/9.9"]))


def test_a_module_tree_the_nodes_cannot_see_is_refused_under_a_cluster(tree):
    campaign = planning.plan(validated(experiment(builds=site(tree))))
    needed = before_jobs.needed_on_nodes(campaign)
    assert needed["the modulepath of build site"] == os.path.realpath(tree)
    with pytest.raises(before_jobs.CannotRun, match="the modulepath of build site"):
        before_jobs.refuse_node_local(needed, [os.path.dirname(os.path.realpath(tree))])
