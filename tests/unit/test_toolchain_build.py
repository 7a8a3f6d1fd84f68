"""The site's toolchain for source builds (issue 55): a toolchain named by modules, its needs checked by
the tools themselves (no dpkg), missing ones named in one line; NEST with MPI through an Lmod module that
provides the MPI compiler wrappers, as far as CMake's configure step, then its cached build reused."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import config_problems, experiment, validated
from snnbench import environments, planning
from snnbench.dev import bench_toolchain
from snnbench.environments import builds, maker, nest_mpi, toolchain
from snnbench.machine import lmod
from snnbench.network import execute


@pytest.fixture
def tree(tmp_path, monkeypatch) -> Path:
    """The MPI wrappers' module tree (snnbench.dev.bench_toolchain, as `make bench-toolchain-build` makes it)."""
    if lmod.LMOD.command() is None:
        pytest.skip("Lmod is not installed: make lmod")
    monkeypatch.delenv("MODULES_CMD", raising=False)  # Lua modulefiles: Lmod's
    return bench_toolchain.wrapper_tree(tmp_path / "site")


def site(tree: Path) -> dict:
    return {"modules": [bench_toolchain.WRAPPERS], "modulepath": [str(tree)]}


def test_the_toolchains_modules_put_its_wrappers_first_and_name_themselves(tree):
    env, loaded = toolchain.loaded(site(tree))
    found = toolchain.ensure(toolchain.needs(mpi=True, gsl=True), env, io.StringIO())
    wrappers = tree.parent / "bin"
    assert found["mpicc"] == f"{wrappers}/mpicc {wrappers}/mpicxx"
    assert loaded["loaded"] == [bench_toolchain.WRAPPERS] and len(loaded["id"]) == 8
    assert toolchain.loaded(site(tree))[1]["id"] == loaded["id"]  # its name, not where its tree lies


def test_what_is_missing_is_named_in_one_line_without_dpkg(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "_debian_root", lambda: False)  # a user, or a RHEL node
    (tmp_path / "cmake").write_text("#!/bin/sh\n")
    (tmp_path / "cmake").chmod(0o755)
    with pytest.raises(toolchain.ToolchainMissing) as error:
        toolchain.ensure(toolchain.needs(mpi=True, gsl=True), {"PATH": str(tmp_path)}, io.StringIO())
    said = str(error.value)
    assert "\n" not in said and said.startswith("not found: a C++ compiler"), said
    assert "mpicc and mpicxx" in said and "GSL (pkg-config gsl, or gsl-config)" in said and "cmake," not in said


def test_a_source_builds_toolchain_is_in_its_key_and_checked_before_any_job(tree, tmp_path):
    source = tmp_path / "nest"
    source.mkdir()
    (source / "CMakeLists.txt").write_text("project(nest)\n")
    plain = {"source": str(source), "cmake": {"with-mpi": "ON"}}
    with_site = {**plain, "toolchain": [bench_toolchain.WRAPPERS], "modulepath": [str(tree)]}
    config = validated(experiment(builds={"plain": plain, "site": with_site}))
    keys = {s["build"]["name"]: s["build"]["key"] for s in planning.expand_points(config["experiments"][0])}
    assert keys["plain"] != keys["site"]
    missing = config_problems(experiment(builds={"site": {**with_site, "toolchain": ["OpenMPI/9"]}}))
    assert len(missing) == 1 and "builds.site.toolchain: module OpenMPI/9 is not available" in missing[0], missing
    wrong = config_problems(experiment(builds={"w": {"pip": "nest-simulator==3.10.0", "toolchain": ["GCC/13"]}}))
    assert len(wrong) == 1 and "builds.w.toolchain: a toolchain's modules are for `source` builds" in wrong[0]


def test_the_site_toolchain_makes_nest_mpi_another_environment(tree, monkeypatch):
    before = environments.definition("nest-mpi")
    monkeypatch.setenv(toolchain.VARIABLE, bench_toolchain.WRAPPERS)
    monkeypatch.setenv(toolchain.PATH_VARIABLE, str(tree))
    defined = environments.definition("nest-mpi")
    assert defined["toolchain"] == site(tree) and "toolchain" not in before
    assert environments.content_key(defined) != environments.content_key(before)
    assert "toolchain" not in environments.definition("brian2")  # compiles nothing of NEST's


def test_a_point_of_an_environment_built_with_the_toolchain_runs_with_it_loaded(tree, monkeypatch):
    monkeypatch.setenv(toolchain.VARIABLE, bench_toolchain.WRAPPERS)
    monkeypatch.setenv(toolchain.PATH_VARIABLE, str(tree))
    config = validated(experiment(resources={"threads_per_rank": [1], "ranks_per_node": [1, 2]}))
    specs = {s["resources"]["ranks"]: s for s in planning.expand_points(config["experiments"][0])}
    environ, loaded = execute.module_environment(specs[2])  # nest-mpi: the MPI it was built against
    assert environ["PATH"].startswith(f"{tree.parent / 'bin'}:") and loaded["loaded"] == [bench_toolchain.WRAPPERS]
    assert execute.module_environment(specs[1]) == (None, None)  # one rank: .venv's wheel, no toolchain


@pytest.mark.slow
def test_nest_with_mpi_configures_through_the_toolchains_wrappers_then_reuses_its_build(tree, tmp_path):
    """CMake's configure step of NEST's sdist, as the nest-mpi build runs it, in an environment of the build
    tools, with the wrappers' module loaded; then the wheel that `make bench-toolchain-build` made for that
    toolchain is taken again, with no configure."""
    env, loaded = toolchain.loaded(site(tree))
    env[nest_mpi.TOOLCHAIN_ID] = loaded["id"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, env=env)
    cache = nest_mpi.install(venv, env, configure_only=tmp_path / "configure")
    values = dict(line.split("=", 1) for line in cache.read_text().splitlines() if "=" in line and ":" in line)
    wrappers = tree.parent / "bin"
    assert values["MPI_CXX_COMPILER:FILEPATH"] == f"{wrappers}/mpicxx", values.get("MPI_CXX_COMPILER:FILEPATH")
    assert values["MPI_C_COMPILER:FILEPATH"] == f"{wrappers}/mpicc"
    assert any(line.startswith("mpicxx ") for line in bench_toolchain.calls(tree.parent))  # CMake asked them
    if not list(nest_mpi.wheel_folder(env).glob("nest_simulator-*.whl")):
        pytest.skip(f"no wheel of this toolchain in {nest_mpi.wheel_folder(env)}: make bench-toolchain-build")
    called, started = len(bench_toolchain.calls(tree.parent)), time.perf_counter()
    wheel = nest_mpi.build_wheel(venv, env)
    assert wheel.parent == nest_mpi.wheel_folder(env) and time.perf_counter() - started < 30
    assert len(bench_toolchain.calls(tree.parent)) == called  # nothing configured, nothing compiled
    assert os.path.basename(wheel).startswith(f"nest_simulator-{nest_mpi.VERSION}-")


def test_a_build_that_lacks_its_toolchain_fails_naming_it(tmp_path, monkeypatch):
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(toolchain, "_debian_root", lambda: False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no cmake, no compiler, no MPI
    build = {**maker.named_build("nest-mpi"), "key": "0" * 16}
    with pytest.raises(maker.BuildFailed) as error:
        maker.make(build, [], tmp_path / "build.log")
    assert "environment nest-mpi" in str(error.value) and "not found: cmake, a C++ compiler" in str(error.value)
    assert not builds.directory(build).exists()
