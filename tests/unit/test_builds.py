"""Simulator builds (issue 11): paths, the content key, config checks, the environment's maker
when it fails, and the regression view between two builds of one table."""

from __future__ import annotations

import re
import subprocess
import tarfile

import numpy as np
import pandas as pd
import pytest
from conftest import config_problems, experiment, validated
from snnbench import environments, families, planning
from snnbench.environments import builds, maker, sources
from snnbench.results import regression

WHEELS = {"nest-3.9": {"pip": "nest-simulator==3.9.0.post0.dev14"}, "nest-3.10.0": {"pip": "nest-simulator==3.10.0"}}


def test_points_of_builds_live_at_simulator_at_build_and_others_keep_their_paths():
    plain = planning.expand_points(validated(experiment())["experiments"][0])
    assert plain[0]["path"] == "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    assert all("build" not in spec for spec in plain)
    specs = planning.expand_points(validated(experiment(builds=WHEELS))["experiments"][0])
    assert len(specs) == 2 * len(plain)
    assert {s["path"].split("/")[2] for s in specs} == {"nest@nest-3.9", "nest@nest-3.10.0"}
    regex = families.get("pd14").point_regex_str()
    for spec in [*plain, *specs]:
        assert re.fullmatch(regex, spec["path"].removeprefix("results/unit/")), spec["path"]
    build = specs[0]["build"]
    assert build["name"] == "nest-3.9" and build["pip"] == WHEELS["nest-3.9"]["pip"]
    assert "nest-simulator==3.9.0.post0.dev14" in build["requirements"]
    assert "nest-simulator==3.10.0" not in build["requirements"]  # the environment file's pin is replaced
    assert re.fullmatch(builds.KEY_PATTERN, build["key"])


def test_the_key_is_the_content_not_the_place(tmp_path, monkeypatch):
    reqs = builds.requirements("nest", "nest-simulator", WHEELS["nest-3.10.0"])
    key = builds.environment_key(reqs, None, {}, "3.11.7")
    monkeypatch.chdir(tmp_path)  # another checkout, another cache root: the same key
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    assert builds.environment_key(list(reversed(reqs)), None, {}, "3.11.7") == key
    assert builds.directory({"key": key}) == tmp_path / "cache" / key
    assert builds.environment_key([*reqs, "extra==1"], None, {}, "3.11.7") != key
    assert builds.environment_key(reqs, None, {}, "3.12.1") != key
    assert builds.environment_key(reqs, None, {"with-mpi": "ON"}, "3.11.7") != key


def test_cache_root_default_and_override(monkeypatch, tmp_path):
    monkeypatch.delenv(environments.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert environments.cache_root() == tmp_path / "xdg" / "snnbench" / "envs"
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "mine"))
    assert environments.cache_root() == tmp_path / "mine"


# A NEST tree's pyproject.toml from 3.10 on: a wheel built by scikit-build-core.
PYPROJECT = "[build-system]\nbuild-backend = 'scikit_build_core.build'\n[project]\nname = 'nest-simulator'\n"


def git_tree(path):
    path.mkdir()
    (path / "CMakeLists.txt").write_text("project(nest)\n")
    (path / "pyproject.toml").write_text(PYPROJECT)
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(path), *command], check=True)
    return path


def test_a_source_build_is_keyed_by_its_commit_and_changes_not_its_path(tmp_path):
    tree = git_tree(tmp_path / "nest")
    source = {"source": str(tree), "cmake": {"with-detailed-timers": True}}
    clean = builds.point_build("nest", "nest-simulator", "branch", source)
    assert clean["source_state"]["dirty"] is False and clean["source_state"]["commit"]
    assert builds.cmake_options(source) == {"with-detailed-timers": "ON"}
    assert "scikit-build-core==1.1.2" in clean["requirements"]
    assert not any(r.startswith("nest-simulator") for r in clean["requirements"])
    moved = git_tree(tmp_path / "elsewhere")  # the same content elsewhere (another commit time: other hash)
    state = builds.source_state(str(moved))
    assert state["git"] and "path" not in state
    (tree / "CMakeLists.txt").write_text("project(nest) # changed\n")
    # Another name for the same build is planned afresh (the cache of this process keys by name), as a later plan is.
    dirty = builds.point_build("nest", "nest-simulator", "branch-changed", source)
    assert dirty["source_state"]["dirty"] is True and dirty["key"] != clean["key"]
    mpi = builds.requirements("nest", "nest-simulator", {"source": str(tree), "cmake": {"with-mpi": "ON"}})
    assert any(r.startswith("mpi4py==") for r in mpi)


@pytest.mark.parametrize(
    "build_set, key, allowed",
    [
        ({"b": {}}, "builds.b", "give either `pip`"),
        ({"b": {"pip": "nest-simulator==3.10.0", "source": "/tmp"}}, "builds.b", "not pip and source"),
        ({"b": {"pip": "nest-simulator==3.10.0", "cmake": {"with-mpi": "ON"}}}, "builds.b.cmake", "`source` builds"),
        ({"b": {"pip": "numpy==2.4.6"}}, "builds.b.pip", "does not name nest-simulator"),
        ({"b": {"source": "/nonexistent/nest"}}, "builds.b.source", "is not a directory"),
        ({"b": {"source": "/tmp"}}, "builds.b.source", "not a nest-simulator source tree"),
        ({"b": {"pip": "nest-simulator; rm -rf /"}}, "builds.b.pip", "allowed: text matching"),
        ({"b/c": {"pip": "nest-simulator==3.10.0"}}, "builds", "does not match"),
        ({"b": {"wheel": "x"}}, "builds.b", "allowed keys: pip, source, cmake"),
        ({}, "builds", "should be non-empty"),
    ],
)
def test_bad_builds_are_refused_naming_the_key(build_set, key, allowed):
    found = config_problems(experiment(builds=build_set))
    assert found and key in found[0] and allowed in found[0], found


def test_a_source_tree_without_a_pip_build_installs_with_cmake(tmp_path):
    """NEST 3.8's and 3.9's trees: a pyproject.toml with tool settings only, CMake alone installs them;
    3.10's builds a wheel with scikit-build-core; a tree without CMakeLists.txt is refused."""
    tree = git_tree(tmp_path / "nest-3.8")
    (tree / "pyproject.toml").write_text("[tool.black]\nline-length = 120\n")
    assert config_problems(experiment(builds={"v3.8": {"source": str(tree)}})) == []
    assert builds.source_recipe(tree) == "cmake-install"
    tools = builds.requirements("nest", "nest-simulator", {"source": str(tree)})
    assert "cython==3.0.12" in tools and not any(r.startswith("scikit-build-core") for r in tools)
    (tree / "pyproject.toml").write_text(PYPROJECT)
    assert builds.source_recipe(tree) == "wheel"
    (tree / "pyproject.toml").write_text("[build-system\n")  # damaged: CMake's install, which needs none
    assert builds.source_recipe(tree) == "cmake-install"
    (tree / "CMakeLists.txt").unlink()
    found = config_problems(experiment(builds={"v3.8": {"source": str(tree)}}))
    assert "builds.v3.8.source" in found[0] and "no CMakeLists.txt" in found[0], found


def test_a_release_named_by_source_is_fetched_and_keyed_by_its_files_not_looked_for_as_a_path(tmp_path, monkeypatch):
    """`source: nest-simulator-3.8` needs no folder made by hand (issue 52): it plans on a machine without
    ~/src, its key is the release's files digest, and CMake installs it; an unknown release is refused
    naming the releases there are."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    release = {"source": "nest-simulator-3.8", "cmake": {"with-models": "iaf_psc_exp;poisson_generator"}}
    assert config_problems(experiment(builds={"nest-3.8": release})) == []
    build = builds.point_build("nest", "nest-simulator", "nest-3.8", release)
    assert build["source"] == "nest-simulator-3.8"  # not made a path of the working directory
    assert build["source_state"] == {
        "third_party": "nest-simulator-3.8",
        "files_sha256": sources.SOURCES["nest-simulator-3.8"].files_sha256,
    }
    assert builds.recipe(build) == "cmake-install" and "cython==3.0.12" in build["requirements"]
    found = config_problems(experiment(builds={"nest-3.7": {"source": "nest-simulator-3.7"}}))
    assert "builds.nest-3.7.source" in found[0] and "nest-simulator-3.8" in found[0], found


def test_a_release_is_unpacked_from_its_verified_archive_and_its_tree_removed_once_installed(tmp_path, monkeypatch):
    """The maker's path for a release: the archive located (a folder here), its tree unpacked into the
    environment, handed to CMake's install, then removed."""
    tree = tmp_path / "upstream" / "nest-simulator-9.9"
    tree.mkdir(parents=True)
    (tree / "CMakeLists.txt").write_text("project(nest)\n")
    archive = tmp_path / "folder" / "nest-simulator-9.9.tar.gz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tree, "nest-simulator-9.9")
    release = sources.Source(
        "nest-simulator-9.9",
        sources.GITHUB + "nest/nest-simulator/archive/refs/tags/v9.9.tar.gz",
        sources.files_digest(archive),
        "GPL-2.0-or-later",
        recipe="cmake-install",
    )
    monkeypatch.setitem(sources.SOURCES, release.name, release)
    installed = []
    monkeypatch.setattr(maker, "_cmake_install", lambda build, *_: installed.append(build["source"]))
    prefix = tmp_path / "env"
    prefix.mkdir()
    with open(tmp_path / "log", "w") as log:
        maker._build_source({"source": release.name}, prefix, log, 1, sources.Settings(folder=str(archive.parent)))
    assert installed == [str(prefix / "archive-source" / release.name)]
    assert not (prefix / "archive-source").exists()


def test_builds_only_for_simulators_that_have_them_and_mpi_only_with_mpi_builds():
    found = config_problems(experiment(simulators=["nest", "brian2-cpp"], builds=WHEELS))
    assert "simulators brian2-cpp have no builds" in found[0]
    found = config_problems(experiment(builds=WHEELS, resources={"threads_per_rank": [1], "ranks_per_node": [2]}))
    assert "builds.nest-3.9" in found[0] and "with-mpi: ON" in found[0]


def test_a_point_of_a_build_runs_in_the_checkouts_link_of_it(tmp_path, monkeypatch):
    from snnbench.network.simulators import EnvironmentMissing, python_for

    spec = planning.expand_points(validated(experiment(builds=WHEELS))["experiments"][0])[0]
    name = builds.linked_name(spec["build"])
    assert name == f"build-{spec['build']['key']}"
    with pytest.raises(EnvironmentMissing, match=r"rules build_environment and link_environment"):
        python_for(spec, repo=tmp_path)
    marker = environments.link_marker(name, tmp_path)
    marker.parent.mkdir()
    marker.write_text("0123456789abcdef\n")  # linked to another build's environment
    with pytest.raises(EnvironmentMissing):
        python_for(spec, repo=tmp_path)
    marker.write_text(spec["build"]["key"] + "\n")
    assert builds.linked_key(name) == spec["build"]["key"] and builds.linked_key("brian2") is None
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    builds.directory(spec["build"]).mkdir(parents=True)
    builds.marker(spec["build"]).write_text("{}")
    assert python_for(spec, repo=tmp_path) == str(tmp_path / f".venv-{name}" / "bin" / "python")


def test_a_failed_build_names_itself_and_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    build = {"name": "bad", "pip": "nest-simulator==0.0.1", "key": "0123456789abcdef", "requirements": ["x==1"]}

    def failing(command, log, what, env=None):
        builds.directory(build).mkdir(parents=True, exist_ok=True)
        raise maker.BuildFailed(f"{what} failed (exit code 1)")

    monkeypatch.setattr(maker, "_run", failing)
    with pytest.raises(maker.BuildFailed, match=r"build nest@bad \(experiment x\) \(nest-simulator==0.0.1"):
        maker.make(build, ["nest@bad (experiment x)"], tmp_path / "log")
    assert not builds.directory(build).exists() and not builds.marker(build).exists()
    assert "build nest@bad" in (tmp_path / "log").read_text()


def two_builds(slower: float, spread: float, seeds: int = 3) -> pd.DataFrame:
    """A table of one point in builds a and b, `seeds` seeds each, b's times `slower` x a's."""
    rows = []
    for build, factor in (("a", 1.0), ("b", slower)):
        for seed in range(seeds):
            t = factor * (1.0 + spread * (seed - 1))
            row = dict(experiment="e", simulator="nest", build=build, nodes=1, ranks_per_node=1, threads_per_rank=1)
            row |= dict(neuron_scale=0.1, indegree_scale=0.1, input="poisson", t_sim_ms=1000.0, seed=seed, valid=True)
            row |= {f"time_{p}_s": t for p in ("setup", "create", "connect", "prepare", "presimulate", "simulate")}
            rows.append(row | {"time_total_s": 6 * t, "real_time_factor": t, "peak_rss_mb_sum": 100.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "slower, spread, expected",
    [
        (1.3, 0.01, "slower"),  # beyond the tolerance and outside the spread over seeds
        (1.3, 0.2, ""),  # beyond the tolerance, within the spread: not flagged
        (1.05, 0.0, ""),  # outside the spread, within the tolerance: not flagged
        (0.7, 0.01, "faster"),
    ],
)
def test_builds_are_flagged_only_beyond_tolerance_and_spread(slower, spread, expected):
    ratios = regression.compare_builds(two_builds(slower, spread), "a", "b", tolerance=0.1)
    assert len(ratios) == 1 and ratios.loc[0, "baseline_build"] == "a" and ratios.loc[0, "build"] == "b"
    assert ratios.loc[0, "ratio_time_simulate_s"] == pytest.approx(slower)
    assert ratios.loc[0, "ratio_time_simulate_s_low"] <= slower <= ratios.loc[0, "ratio_time_simulate_s_high"]
    assert ratios.loc[0, "change_time_simulate_s"] == expected
    assert ratios.loc[0, "change_peak_rss_mb_sum"] == "" and ratios.loc[0, "slowdown"] == (expected == "slower")
    text = regression.render(ratios, 0.1)
    assert ("SLOWER" in text) == (expected == "slower") and ("FASTER" in text) == (expected == "faster")


def test_compare_builds_names_the_builds_a_table_has(tmp_path):
    table = two_builds(1.0, 0.1)
    with pytest.raises(ValueError, match="no points of build 'c'.*its builds: a, b"):
        regression.compare_builds(table, "a", "c", 0.1)
    path = tmp_path / "points.csv"
    table.to_csv(path, index=False)
    figure = tmp_path / "builds.png"
    assert regression.main(["--builds", "a", "b", str(path), "--figure", str(figure)]) == 0
    assert figure.stat().st_size > 1000 and figure.with_suffix(".pdf").exists()
    assert np.isfinite(regression.compare_builds(table, "a", "b", 0.1).filter(like="ratio_").to_numpy()).all()


def test_the_build_rule_sees_content_only_and_a_failure_names_every_use():
    config = validated(experiment(builds=WHEELS), experiment(name="other", builds={"again": WHEELS["nest-3.9"]}))
    (label, build), _ = families.get("pd14").builds(config["experiments"][0])
    assert label == "nest@nest-3.9" and "name" not in builds.content(build)
    assert builds.content(build)["key"] == build["key"]
    assert planning.build_labels(config, build["key"]) == [
        "nest@again (experiment other)",
        "nest@nest-3.9 (experiment unit)",
    ]


def test_nest_before_3_9_reports_its_build_through_slis_statusdict():
    """build_info, read by the build's probe and every NEST point: the kernel's build_info where NEST has it
    (3.9 on), else the version and SLI's statusdict (3.8's tree), keys it lacks left out."""
    from types import SimpleNamespace

    from snnbench.network.simulators.nest_kernel import build_info

    status = {"have_mpi": False, "threading": "openmp", "built": "Nov 27 2026"}

    def sli_func(command):
        return status[command.split()[1].lstrip("/")]

    def no_build_info(key):
        raise KeyError(key)

    old = SimpleNamespace(__version__="3.8", GetKernelStatus=no_build_info, ll_api=SimpleNamespace(sli_func=sli_func))
    assert build_info(old) == {"version": "3.8", "have_mpi": False, "threads_model": "openmp", "built": "Nov 27 2026"}
    new = SimpleNamespace(GetKernelStatus=lambda key: {"version": "3.10.0", "have_mpi": True})
    assert build_info(new) == {"version": "3.10.0", "have_mpi": True}
