"""Brian2's devices on tiny PD14 points, in their own environments.

- cpp_standalone through the real workflow beside NEST (1 and 2 threads, three seeds): records,
  rates against NEST's within the seed-to-seed spread, the build reused across seeds, tables.
- Brian2CUDA (needs a GPU): skipped with the reason where the prerequisites are missing.
  Brian2GeNN through the workflow is in test_brian2genn.py (its own file, so that its run and
  cpp_standalone's go to different pytest-xdist workers).
- Failing early: a GeNN or GPU point on a machine without GeNN or GPU gets a failed record that
  says what is missing.

Compiling PD14 takes minutes (one build per device, thread count and model size); builds are
kept in ~/.cache/snnbench/brian2 (SNNBENCH_BUILD_CACHE), so later runs reuse them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import (
    DEFAULT_FIGURES,
    REPO,
    assert_plausible,
    copy_workflow,
    experiment,
    per_population,
    run_first_point,
    snakemake,
    validated,
)
from snnbench import environments
from snnbench.network.models import pd14
from snnbench.network.simulators.brian2.devices import PrerequisiteMissing, check_prerequisites

BRIAN2_ENV = REPO / ".venv-brian2"
GENN_ENV = REPO / ".venv-brian2genn"
CUDA_ENV = REPO / ".venv-brian2cuda"
TINY = {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 100, "t_sim_ms": 500}
SEEDS = [1, 2, 3]


def needs_env(env: Path):
    return pytest.mark.skipif(
        not environments.is_linked(env.name.removeprefix(".venv-")),
        reason=f"{env.name} is not installed (make env-{env.name[6:]})",
    )


def prerequisite_missing(simulator: str, env: dict) -> str | None:
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        check_prerequisites(simulator)
    except PrerequisiteMissing as missing:
        return str(missing)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return None


def run_one(tmp_path: Path, simulator: str, seed: int = 1, threads: int = 1, limit_s: float = 1800, **extra) -> dict:
    cfg = validated(
        experiment(simulators=[simulator], resources={"threads_per_rank": [threads]}, pd14=TINY, seeds=[seed], **extra)
    )
    return run_first_point(tmp_path, cfg, limit_s)


# --- cpp_standalone through the workflow, beside NEST ------------------------------------------


@pytest.fixture(scope="module")
def workflow_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("brian2-e2e"))
    config = {
        "experiments": [
            {
                "name": "b2",
                "simulators": ["nest", "brian2-cpp"],
                "scaling": "strong",
                "resources": {"threads_per_rank": [1, 2]},
                "pd14": TINY,
                "seeds": SEEDS,
                "time_limit_min": 30,
            }
        ]
    }
    (workdir / "config" / "b2.yaml").write_text(yaml.safe_dump(config))
    # Not conftest's 15-minute limit: the first run compiles PD14 twice (1 and 2 threads).
    snakemake(workdir, "--configfile", "config/b2.yaml", timeout_s=3600)
    return workdir


@pytest.mark.slow
@needs_env(BRIAN2_ENV)
def test_cpp_standalone_through_the_workflow(workflow_run):
    workdir = workflow_run
    expected = pd14.derive(TINY["neuron_scale"], TINY["indegree_scale"]).total_synapses
    records = {}
    for threads in (1, 2):
        for seed in SEEDS:
            path = workdir / f"results/b2/brian2-cpp/nodes1_ranks1_threads{threads}/N0.02_K0.1/seed{seed}/record.json"
            rec = json.loads(path.read_text())
            assert rec["status"] == "ok", rec["failure"]
            records[threads, seed] = rec
            assert rec["network"]["num_synapses"] == expected
            assert_plausible(rec)
            sim = rec["simulator"]
            assert sim["device"] == "cpp_standalone" and sim["threads"] == threads and sim["synapse_objects"] == 55
            assert rec["ranks"][0]["threads"] == threads
            # The child ran in .venv-brian2 (Python 3.13); the provenance describes the parent.
            assert sim["environment"]["packages"]["brian2"] == sim["version"]
            assert ".venv-brian2/" in sim["environment"]["executable"]
            assert sim["environment"]["python"] != rec["provenance"]["python"]["version"]
            timers = rec["simulator_timers_s"]
            assert timers["prepare"]["compile"] >= 0 and timers["prepare"]["codegen"] > 0
            binary = timers["presimulate"]
            # The phases keep the wall time: presimulate and simulate are the binary's own timers.
            assert rec["phases_s"]["presimulate"] == pytest.approx(binary["binary_presimulate"])
            assert rec["phases_s"]["simulate"] >= binary["binary_simulate"]
            assert binary["binary_wall"] >= binary["binary_presimulate"] + binary["binary_simulate"]
            assert rec["real_time_factor"] == pytest.approx(rec["phases_s"]["simulate"] / 0.5)
        # One build per thread count: the seed that runs first (any order) compiles, the others run
        # the same binary.
        reused = [records[threads, s]["simulator"]["build"]["binary_reused"] for s in SEEDS]
        assert sorted(reused) == [False, True, True] or all(reused), reused  # all: built by an earlier run
        build_dirs = {records[threads, s]["simulator"]["build"]["directory"] for s in SEEDS}
        assert len(build_dirs) == 1
    # Seeds give different networks and activity; the same seed gives the same network on 1 and 2 threads.
    assert len({json.dumps(per_population(records[1, s], "spikes")) for s in SEEDS}) == 3

    points = pd.read_csv(workdir / "results/b2/points.csv")
    assert set(points["simulator"]) == {"nest", "brian2-cpp"} and len(points) == 12
    assert points["valid"].all()
    brian2 = points[points["simulator"] == "brian2-cpp"]
    assert brian2["rates_agree_with_nest"].all(), brian2[[c for c in points if c.startswith("rate_")]]
    assert brian2["binary_reused"].sum() >= 4
    assert brian2["timer_prepare_compile_s"].notna().all()
    assert points[points["simulator"] == "nest"]["rates_agree_with_nest"].isna().all()
    for figure in DEFAULT_FIGURES:
        assert (workdir / f"results/b2/figures/{figure}.png").stat().st_size > 1000


# --- Brian2GeNN, CPU-only ------------------------------------------------------------------------


def skip_unless_env(env: Path) -> None:
    if not (env / ".installed").exists():
        pytest.skip(f"{env.name} is not installed (make env-{env.name.removeprefix('.venv-')})")


# --- Brian2CUDA ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_brian2cuda(tmp_path):
    missing = prerequisite_missing("brian2-cuda", {})
    if missing:
        pytest.skip(missing)
    skip_unless_env(CUDA_ENV)
    rec = run_one(tmp_path, "brian2-cuda", limit_s=3 * 3600)
    assert rec["status"] == "ok", rec["failure"]
    assert rec["simulator"]["device"] == "cuda_standalone"
    assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"]
    assert_plausible(rec)
    assert rec["provenance"]["gpu"]["name"] and rec["provenance"]["gpu"]["driver"]
    assert rec["simulator"]["gpu_memory_peak_mb"] > 0


# --- Failing early -------------------------------------------------------------------------------


def test_genn_and_gpu_prerequisites_are_named(tmp_path, monkeypatch):
    monkeypatch.delenv("GENN_PATH", raising=False)
    with pytest.raises(PrerequisiteMissing, match="GENN_PATH is not set"):
        check_prerequisites("brian2-genn-cpu")
    monkeypatch.setenv("GENN_PATH", str(tmp_path))
    with pytest.raises(PrerequisiteMissing, match="is not a GeNN source tree"):
        check_prerequisites("brian2-genn-cpu")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "genn-buildmodel.sh").touch()
    (tmp_path / "version.txt").write_text("5.1.0\n")
    with pytest.raises(PrerequisiteMissing, match="Brian2GeNN needs GeNN 4.x"):
        check_prerequisites("brian2-genn-cpu")
    (tmp_path / "version.txt").write_text("4.9.0\n")
    with pytest.raises(PrerequisiteMissing, match="is not built"):
        check_prerequisites("brian2-genn-cpu")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no nvidia-smi, no nvcc
    monkeypatch.delenv("CUDA_PATH", raising=False)
    with pytest.raises(PrerequisiteMissing, match="brian2-cuda needs a GPU"):
        check_prerequisites("brian2-cuda")


@pytest.mark.slow
@needs_env(GENN_ENV)
def test_genn_point_with_a_wrong_genn_fails_early_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("GENN_PATH", str(tmp_path))  # GENN_PATH wins over the environment's own build
    rec = run_one(tmp_path, "brian2-genn-cpu", limit_s=120)
    assert rec["status"] == "failed"
    assert f"GENN_PATH={tmp_path} is not a GeNN source tree" in rec["failure"]["reason"]
