"""End to end under SLURM: a two-node PD14 point whose NEST is the site's module, reached through a module
hierarchy (compiler -> MPI -> NEST, as EasyBuild lays it out) with either tool a site may run: Lmod (Lua
modulefiles) and Environment Modules 5 (Tcl ones, Debian's package unpacked beside Lmod). The tool is the
site's (the one set up in the head's environment, which the jobs inherit): one workflow run per tool. The
plan checks the modules in the order they load; each rank loads them on its node and the record says what
was loaded, from which files, by which tool. The NEST module stands on the cached MPI NEST (envs/nest-mpi.yaml)."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from conftest import HIERARCHY, TINY, copy_workflow, environment_modules, module_hierarchy
from snnbench import environments
from snnbench.machine import lmod
from test_slurm import (  # noqa: F401 (the fixtures cluster and shared_dir)
    SHARED_NODES,
    cluster,
    needs_mpi_nest,
    shared_dir,
    slurm_snakemake,
)

pytestmark = pytest.mark.slow

UNSET = ("LMOD_CMD", "MODULES_CMD", "MODULEPATH", "LOADEDMODULES", "_LMFILES_")


def site_environment(tool: str) -> dict:
    """The head's environment at a site with this tool set up (the other one not)."""
    environ = {k: v for k, v in os.environ.items() if k not in UNSET}
    if tool == "environment-modules":
        environ["MODULES_CMD"] = environment_modules()
    elif lmod.LMOD.command() is None:
        pytest.skip("Lmod is not installed: make test installs Debian's lmod (as root)")
    return environ


@pytest.mark.parametrize("tool", ["lmod", "environment-modules"])
def test_a_two_node_point_runs_from_the_sites_module_hierarchy(cluster, shared_dir, tool):  # noqa: F811
    needs_mpi_nest()
    environ = site_environment(tool)
    workdir = copy_workflow(shared_dir(f"trees-{tool}"))
    nest_bin = environments.cached(environments.key("nest-mpi")) / "bin"
    tree = module_hierarchy(workdir / "modulefiles", "lua" if tool == "lmod" else "tcl", nest_bin)
    name = f"tree-{tool}"
    experiment = dict(
        TINY,
        name=name,
        builds={"site": {"modules": HIERARCHY, "modulepath": [str(tree["core"])]}},
        resources={"nodes": [2], "ranks_per_node": [1], "threads_per_rank": [1]},
    )
    (workdir / "config" / "trees.yaml").write_text(yaml.safe_dump({"slurm": SHARED_NODES, "experiments": [experiment]}))
    checked = slurm_snakemake(workdir, "config/trees.yaml", "-n", env=environ)
    assert "rule build_environment:" not in checked.stdout  # a module build makes no environment
    slurm_snakemake(workdir, "config/trees.yaml", env=environ)

    (path,) = workdir.glob(f"results/{name}/nest@site/nodes2_*/*/seed1/record.json")
    rec = json.loads(path.read_text())
    assert rec["status"] == "ok", rec["failure"]
    assert sorted(r["host"] for r in rec["ranks"]) == ["n1", "n2"]
    assert rec["simulator"]["have_mpi"] and rec["simulator"]["version"].startswith("3.10")
    loaded = rec["provenance"]["build"]["modules"]
    assert loaded["tool"] == tool and loaded["loaded"] == loaded["module_list"] == HIERARCHY
    homes = [tree["core"], tree["compiler"], tree["openmpi"]]
    extension = ".lua" if tool == "lmod" else ""
    assert loaded["files"] == [f"{home / module}{extension}" for home, module in zip(homes, HIERARCHY, strict=True)]
    print(json.dumps(loaded, indent=1))  # the record's modules section, for the closing note (pytest -s)
