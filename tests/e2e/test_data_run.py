"""The snn-data family with tonic and torch (envs/tonic.yaml): cached samples equal naive ones, and
the CPU workflow end to end on the small synthetic dataset of config/experiments/snn-data-ci.yaml.
Asserts on what the caches hold and read, never on times (speed belongs in the benchmark)."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
from conftest import REPO, copy_workflow, snakemake
from snnbench.data.family import FIGURES
from snnbench.machine import gpu

pytestmark = pytest.mark.slow
PYTHON = REPO / ".venv-tonic" / "bin" / "python"


@pytest.fixture(scope="module")
def tonic_python():
    if not PYTHON.exists():
        pytest.skip("environment tonic not installed (make env-tonic)")
    return PYTHON


def test_cached_datasets_yield_exactly_the_naive_tensors(tonic_python):
    out = subprocess.run(
        [str(tonic_python), "-m", "snnbench.data.equivalence", "24"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for cache in ("disk", "memory"):
        assert report[f"{cache}_fill_equal"] and report[f"{cache}_read_equal"]
        assert report[f"{cache}_dense_batches_equal"] and report[f"{cache}_sparse_batches_equal"]
        assert report[f"{cache}_fill_source_reads"] == 24 and report[f"{cache}_read_source_reads"] == 0


@pytest.fixture(scope="module")
def ci_run(tonic_python, tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("data-e2e"))
    proc = snakemake(workdir, "--configfile", "config/experiments/snn-data-ci.yaml")
    return workdir, proc


def test_every_cpu_strategy_runs(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-data-ci/points.csv")
    assert set(points["strategy"]) == {"naive", "disk", "memory"} and set(points["tensors"]) == {"dense", "sparse"}
    assert (points["status"] == "ok").all(), points["failure_reason"].tolist()
    assert points["valid"].all() and (points["dataset_source"] == "synthetic").all()
    assert (points["samples"] == 200).all() and points["bound"].isin(["loading", "compute"]).all()
    assert (points["later_total_s"] > 0).all() and (points["peak_rss_mb"] > 100).all()
    workers = pd.read_csv(workdir / "results/snn-data-ci-workers/points.csv")
    assert (workers["status"] == "ok").all() and (workers["workers"] == 2).all()


def test_first_epoch_fills_the_cache_and_later_epochs_read_it(ci_run):
    workdir, _ = ci_run
    for experiment in ("snn-data-ci", "snn-data-ci-workers"):
        for path in (workdir / "results" / experiment).glob("synthetic/*/*/seed1/record.json"):
            rec = json.loads(path.read_text())
            strategy, epochs = rec["point"]["loader"]["strategy"], rec["data"]["epochs"]
            assert epochs[0]["source_reads"] == 200 and all(e["samples"] == 200 for e in epochs)
            later_reads = [e["source_reads"] for e in epochs[1:]]
            if strategy == "naive":
                assert later_reads == [200] * len(later_reads) and epochs[-1]["cache_files"] == 0
            else:
                assert later_reads == [0] * len(later_reads), path  # every later sample came from the cache
            if strategy == "disk":
                assert [e["cache_files"] for e in epochs] == [200] * len(epochs) and epochs[0]["cache_disk_bytes"] > 0
            if strategy == "memory":
                assert epochs[-1]["cache_memory_bytes"] == epochs[0]["source_bytes"] == 200 * 50 * 700 * 2


def test_gpu_points_skip_with_no_gpu_or_run_on_one(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-data-ci-gpu/points.csv")
    assert set(points["strategy"]) == {"naive", "disk", "gpu"}
    present, _ = gpu.present()
    if present:
        assert (points["status"] == "ok").all()
    else:
        assert (points["status"] == "skipped").all()
        assert all(reason.startswith("no GPU") for reason in points["failure_reason"])


def test_tables_and_figures_show_each_strategy(ci_run):
    workdir, _ = ci_run
    everything = pd.read_csv(workdir / "results/points.csv")
    assert set(everything["experiment"]) == {"snn-data-ci", "snn-data-ci-workers", "snn-data-ci-gpu"}
    for experiment in ("snn-data-ci", "snn-data-ci-workers", "snn-data-ci-gpu"):
        for name in FIGURES:
            for ext in ("png", "pdf"):
                assert (workdir / f"results/{experiment}/figures/{name}.{ext}").stat().st_size > 1000
    provenance = (workdir / "results/snn-data-ci/provenance.html").read_text()
    assert all(strategy in provenance for strategy in ("naive (dense", "disk (sparse", "memory (dense"))


def test_model_builders_are_the_spec_models(tonic_python):
    code = "from snnbench.data import model, spec; assert sorted(model.BUILDERS) == sorted(spec.MODELS)"
    out = subprocess.run([str(tonic_python), "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr


def test_ci_config_is_the_documented_one():
    import yaml

    config = yaml.safe_load((REPO / "config/experiments/snn-data-ci.yaml").read_text())
    block = config["experiments"][0]["snn_data"]
    assert set(block["strategies"]) == {"naive", "disk", "memory"} and block["samples"] <= 500
