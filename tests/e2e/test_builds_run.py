"""End to end: one experiment in two NEST builds from PyPI (3.9 and 3.10.0) on tiny points, and a
build of a version that does not exist, which fails alone and names itself while the others
finish. The builds' environments go to the user's cache ($SNNBENCH_ENV_CACHE, else
~/.cache/snnbench/envs): ~1 min each the first time, reused afterwards. A source-tree build runs
only where $SNNBENCH_TEST_NEST_SOURCE names a nest-simulator tree (it compiles NEST)."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake
from snnbench.environments import builds

pytestmark = pytest.mark.slow

WHEELS = {"nest-3.9": {"pip": "nest-simulator==3.9.0.post0.dev14"}, "nest-3.10.0": {"pip": "nest-simulator==3.10.0"}}
CONFIG = {
    "experiments": [
        dict(TINY, name="builds", builds=WHEELS, resources={"threads_per_rank": [1]}, seeds=[1, 2]),
        dict(
            TINY,
            name="builds-bad",
            builds={"bad": {"pip": "nest-simulator==0.0.1"}},
            resources={"threads_per_rank": [1]},
        ),
    ]
}
POINT = "results/builds/nest@{build}/nodes1_ranks1_threads1/N0.02_K0.1/seed{seed}"


def write_config(workdir, config) -> str:
    (workdir / "config" / "builds.yaml").write_text(
        yaml.safe_dump(config, sort_keys=False)
    )  # keeps the builds in order: the first is the baseline
    return "config/builds.yaml"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("builds"))
    configfile = write_config(workdir, CONFIG)
    proc = snakemake(workdir, "--configfile", configfile, check=False, timeout_s=1800)
    return workdir, configfile, proc


def test_both_builds_run_and_are_compared(finished):
    workdir, _, _ = finished
    for build, version in (("nest-3.9", "3.9.0"), ("nest-3.10.0", "3.10.0")):
        for seed in (1, 2):
            rec = json.loads((workdir / POINT.format(build=build, seed=seed) / "record.json").read_text())
            assert rec["status"] == "ok", rec["failure"]
            assert rec["simulator"]["version"].startswith(version)  # what the imported nest module says
            assert rec["point"]["build"]["name"] == build
            made = rec["provenance"]["build"]
            assert made["simulator"]["version"] == rec["simulator"]["version"]
            assert made["key"] == rec["point"]["build"]["key"] and made["pip_freeze_sha256"]
            assert rec["provenance"]["packages"]["nest-simulator"].startswith(version)
    points = pd.read_csv(workdir / "results/builds/points.csv")
    assert sorted(points["build"]) == ["nest-3.10.0", "nest-3.10.0", "nest-3.9", "nest-3.9"]
    assert set(points["simulator_build"]) == {"nest@nest-3.9", "nest@nest-3.10.0"}
    assert points["valid"].all() and points["build_key"].nunique() == 2
    assert set(points["build_spec"]) == {w["pip"] for w in WHEELS.values()}
    ratios = pd.read_csv(workdir / "results/builds/builds.csv")
    assert list(ratios["baseline_build"]) == ["nest-3.9"] and list(ratios["build"]) == ["nest-3.10.0"]
    assert ratios["ratio_time_simulate_s"].between(0.1, 10).all() and "change_time_simulate_s" in ratios
    for figure in ("builds", "time", "scaling", "activity"):
        assert (workdir / f"results/builds/figures/{figure}.png").stat().st_size > 1000
    assert "nest-3.10.0 / nest-3.9" in (workdir / "logs/analyze/builds/builds.log").read_text()


def test_a_build_that_fails_stops_only_its_points_and_names_itself(finished):
    workdir, _, proc = finished
    assert proc.returncode != 0  # the bad build's job failed (keep-going: the rest finished)
    bad = [s for s in CONFIG["experiments"][1]["builds"].values()]
    assert bad and not list((workdir / "results/builds-bad").glob("**/record.json"))
    logs = {p.name: p.read_text() for p in (workdir / "logs/build").glob("*.log")}
    failed = [text for text in logs.values() if "nest@bad" in text]
    assert len(failed) == 1 and "installing" in failed[0] and "failed" in failed[0], logs
    assert "nest@bad (experiment builds-bad)" in proc.stdout + proc.stderr
    assert (workdir / "results/builds/points.csv").exists()  # the other experiment finished


def test_a_second_checkout_reuses_the_environments(finished, tmp_path):
    workdir, _, _ = finished
    other = copy_workflow(tmp_path)
    configfile = write_config(other, dict(CONFIG, experiments=CONFIG["experiments"][:1]))
    proc = snakemake(other, "--configfile", configfile, "-n")
    # No job builds an environment (Snakemake only notes that the cached ones have no metadata of this checkout).
    assert "rule execute_point_pd14:" in proc.stdout and "rule build_environment:" not in proc.stdout


@pytest.mark.skipif(
    not os.environ.get("SNNBENCH_TEST_NEST_SOURCE"),
    reason="set SNNBENCH_TEST_NEST_SOURCE to a nest-simulator source tree to build and run it (compiles NEST)",
)
def test_a_source_tree_build(tmp_path):
    tree = os.environ["SNNBENCH_TEST_NEST_SOURCE"]
    workdir = copy_workflow(tmp_path)
    # The models PD14 uses: NEST's full model set takes ~25 min to compile on 2 cores.
    models = "iaf_psc_exp;poisson_generator;dc_generator;spike_recorder;static_synapse"
    cmake = {"with-detailed-timers": "ON", "with-mpi": "OFF", "with-models": models}
    source = {"tree": {"source": tree, "cmake": cmake}}
    config = {"experiments": [dict(TINY, name="source", builds=source, resources={"threads_per_rank": [1]})]}
    snakemake(workdir, "--configfile", write_config(workdir, config), timeout_s=3600)
    rec = json.loads(
        (workdir / "results/source/nest@tree/nodes1_ranks1_threads1/N0.02_K0.1/seed1/record.json").read_text()
    )
    assert rec["status"] == "ok" and rec["simulator"]["detailed_timers"]
    made = rec["provenance"]["build"]
    assert made["source_state"] == builds.source_state(tree) and made["cmake"]["with-detailed-timers"] == "ON"
    assert made["compiler"]
    points = pd.read_csv(workdir / "results/source/points.csv")
    assert points.loc[0, "build_source_describe"] == made["source_state"].get("describe")
