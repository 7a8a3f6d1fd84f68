"""End to end: a NEST build given as the site's environment modules (Debian's Lmod, a modulefile
tree made by the test that provides the cached MPI NEST as a module) runs its point with the modules
loaded, records them, and plans no environment; a module that does not exist stops the workflow
before any job. Under SLURM: tests/e2e/test_slurm.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from conftest import MPI_MODULE, NEST_MODULE, TINY, copy_workflow, module_tree, snakemake

pytestmark = pytest.mark.slow

POINT = "results/modules/nest@site/nodes1_ranks1_threads1/N0.02_K0.1/seed1"


def write_config(workdir, modules: list[str]) -> str:
    tree = module_tree(workdir / "modulefiles")
    build = {"site": {"modules": modules, "modulepath": [str(tree)]}}
    experiment = dict(TINY, name="modules", builds=build, resources={"threads_per_rank": [1]})
    (workdir / "config" / "modules.yaml").write_text(yaml.safe_dump({"experiments": [experiment]}))
    return "config/modules.yaml"


def test_a_module_build_point_runs_with_its_modules_loaded(tmp_path):
    workdir = copy_workflow(tmp_path)
    configfile = write_config(workdir, [NEST_MODULE])
    planned = snakemake(workdir, "--configfile", configfile, "-n")
    assert "rule execute_point_pd14:" in planned.stdout
    assert "rule build_environment:" not in planned.stdout and "rule link_environment:" not in planned.stdout
    snakemake(workdir, "--configfile", configfile)
    rec = json.loads((workdir / POINT / "record.json").read_text())
    assert rec["status"] == "ok", rec["failure"]
    assert rec["simulator"]["version"].startswith("3.10")  # what the module's NEST says
    made = rec["provenance"]["build"]
    assert made["name"] == "site" and made["build"]["modules"] == [NEST_MODULE]
    assert made["modules"]["loaded"] == made["modules"]["module_list"] == [MPI_MODULE, NEST_MODULE]
    assert made["modules"]["lmod_version"]
    # The hardware record's `module list`, run in the point's process (modules loaded, no `module` function).
    (node,) = rec["hardware"]
    listed = json.loads((workdir / POINT / node).read_text())["modules"]
    assert MPI_MODULE in listed and NEST_MODULE in listed, listed
    log = (workdir / "logs/execute/modules/nest@site/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log").read_text()
    # The Python the module put first on PATH: the cached NEST's.
    assert "/snnbench/envs/" in log.split("running: ")[1].split()[0], log[:500]
    points = pd.read_csv(workdir / "results/modules/points.csv")
    assert list(points["simulator_build"]) == ["nest@site"] and points["valid"].all()
    assert list(points["build_modules"]) == [f"{MPI_MODULE} {NEST_MODULE}"]
    assert list(points["build_spec"]) == [NEST_MODULE]
    print(f"module load per point: {made['modules']['load_s']:.3f} s")


def test_a_missing_module_stops_the_workflow_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path)
    configfile = write_config(workdir, [MPI_MODULE, "nest/9.9"])
    proc = snakemake(workdir, "--configfile", configfile, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert f"Error in config ({configfile}, config/config.yaml):" in said, said[-2000:]
    assert "experiments[0] (modules): builds.site.modules: module nest/9.9 is not available" in said, said[-2000:]
    assert MPI_MODULE + " is not" not in said
    assert not (workdir / "logs").exists() and not list((workdir / "results").iterdir())
