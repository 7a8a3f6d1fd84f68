"""The snn-training family for real: the libraries' environments, the equivalence test, the timing
driver, and the workflow end to end on CPU (config/experiments/snn-training-ci.yaml).

Needs the environments of `make training-envs` (`make test` builds them).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, copy_workflow, snakemake
from snnbench import planning
from snnbench.machine import gpu
from snnbench.training import equivalence
from snnbench.training import execute as training_execute
from snnbench.training import family as figures

pytestmark = pytest.mark.slow

CPU_FRAMEWORKS = ["torch", "snntorch", "norse", "sinabs", "spikingjelly", "rockpool"]
SAME_NEURON = ["snntorch", "norse", "sinabs", "spikingjelly"]


@pytest.fixture(scope="module")
def equivalence_report(tmp_path_factory):
    return equivalence.run(CPU_FRAMEWORKS[1:], tmp_path_factory.mktemp("equivalence"))


def test_every_library_implementing_the_spec_fires_the_reference_spikes(equivalence_report):
    report = equivalence_report["frameworks"]
    assert report["torch"]["spike_mismatch_fraction"] == 0.0
    for framework in SAME_NEURON:
        comparison = report[framework]
        assert "error" not in comparison, comparison
        assert comparison["equivalent"], (framework, comparison["problems"])
        assert comparison["expected_same_spikes"]
        assert 0.09 < comparison["spike_rate"] < 0.11
    # What still differs is recorded: norse's surrogate and reset gradient change its weight gradient.
    assert report["norse"]["grad_rel_diff"] > 0.1
    assert any("SuperSpike" in d for d in report["norse"]["differences"])
    assert report["snntorch"]["grad_rel_diff"] < 1e-3 and report["sinabs"]["grad_rel_diff"] < 1e-3


def test_rockpool_differs_exactly_by_its_documented_reset(equivalence_report):
    rockpool = equivalence_report["frameworks"]["rockpool"]
    assert not rockpool["equivalent"] and not rockpool["expected_same_spikes"]
    assert any("subtracting theta" in d for d in rockpool["differences"])
    # Against the reference with a subtractive reset, rockpool's spikes agree.
    assert rockpool["vs_subtract_reset_mismatch_fraction"] <= equivalence.SPIKE_TOLERANCE


def test_equivalence_check_fails_on_a_deliberately_broken_neuron(equivalence_report):
    broken = equivalence_report["frameworks"][equivalence.BROKEN]
    assert not broken["equivalent"]
    assert any("differ from the reference" in p for p in broken["problems"])


def run_child(spec: dict, tmp_path: Path) -> dict:
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    python = training_execute.python_for(spec)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.run(
        [python, "-m", "snnbench.training.run", str(spec_path), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((tmp_path / "result.json").read_text())


def small_spec(framework="torch", **block) -> dict:
    from conftest import validated

    exp = {
        "name": "small",
        "model": "snn-training",
        "snn_training": {"frameworks": [framework], "n": [128], "T": [50], "batch": [4], "threads": 1, **block},
    }
    return planning.expand_points(validated(exp)["experiments"][0])[0]


def test_timing_driver_measures_a_real_training_step(tmp_path):
    result = run_child(small_spec(), tmp_path)
    assert result["status"] == "ok"
    timing = result["timing"]
    for name in ("forward_s", "backward_s", "step_s"):
        stats = timing[name]
        assert stats["n"] == 5 and len(stats["samples"]) == 5
        assert stats["q1"] <= stats["median"] <= stats["q3"] and stats["iqr"] >= 0
    assert timing["warmup"]["steps"] >= 2 and timing["warmup"]["compile_s"] >= 0
    # forward and backward of a fresh graph each take part of a step (medians over noisy runs: loose)
    assert timing["step_s"]["median"] > 0.5 * max(timing["forward_s"]["median"], timing["backward_s"]["median"])
    assert result["sanity"]["passed"], result["sanity"]["problems"]
    assert result["sanity"]["min_time_s"]["forward"] == pytest.approx(
        2 * 50 * 4 * 128**2 / result["sanity"]["peak_flops"]
    )
    assert result["trainable_parameters"] == {"linear.weight": 128 * 128}
    assert abs(result["activity"]["spike_rate"] - 0.1) < 0.01
    assert result["memory"]["peak_rss_mb"] >= result["memory"]["rss_start_mb"] > 50


def test_cuda_point_skips_with_no_gpu_or_runs_on_one(tmp_path):
    spec = small_spec(devices=["cuda"])
    present, _ = gpu.present()
    result = run_child(spec, tmp_path)
    if present:
        assert result["status"] == "ok" and result["device"]["type"] == "cuda"
        assert result["timing"]["forward_s"]["n"] >= 20 and "cuda_max_allocated_mb" in result["memory"]
        assert result["sanity"]["passed"], result["sanity"]["problems"]
    else:
        assert result["status"] == "skipped" and result["reason"].startswith("no GPU")


@pytest.fixture(scope="module")
def ci_run(tmp_path_factory):
    # The workflow's copy as every end-to-end test makes it (a pattern ignoring "results" anywhere would leave
    # out scripts/snnbench/results).
    workdir = copy_workflow(tmp_path_factory.mktemp("training-e2e"))
    proc = snakemake(workdir, "--configfile", "config/experiments/snn-training-ci.yaml")
    return workdir, proc


def test_ci_experiment_records_every_library(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-training-ci/points.csv").set_index("framework")
    for framework in CPU_FRAMEWORKS:
        row = points.loc[framework]
        assert row["status"] == "ok", row["failure_reason"]
        assert row["valid"] and row["sanity_passed"]
        assert row["n"] == 512 and row["T"] >= 100 and row["repetitions"] >= 5
        assert 0 < row["forward_median_s"] and 0 < row["backward_median_s"] and 0 < row["step_median_s"]
        assert abs(row["spike_rate"] - row["target_rate"]) < 0.1 * row["target_rate"]
        assert row["peak_rss_mb"] > 100 and row["job_wall_s"] > 0
    assert points.loc["sinabs-exodus", "status"] == "skipped"
    assert "CUDA-only" in points.loc["rockpool-exodus", "failure_reason"]
    assert "Python 3.10" in points.loc["lava-dl", "failure_reason"]
    record = json.loads(
        (
            workdir
            / "results/snn-training-ci/norse/cpu_float32_highest_unbind_vanilla/linear_n512_T100_B10/seed1/record.json"
        ).read_text()
    )
    assert record["training"]["framework"]["version"] == "1.1.0" and record["training"]["framework"]["differences"]

    gpu_points = pd.read_csv(workdir / "results/snn-training-ci-gpu/points.csv").set_index("framework")
    present, _ = gpu.present()
    if present:
        assert gpu_points.loc["torch", "status"] == "ok"
    else:
        assert (gpu_points["status"] == "skipped").all()
        assert all(reason.startswith("no GPU") for reason in gpu_points["failure_reason"])

    everything = pd.read_csv(workdir / "results/points.csv")
    assert set(everything["experiment"]) == {
        "snn-training-ci",
        "snn-training-ci-loop",
        "snn-training-ci-gpu",
        "snn-training-ci-memory",
        "snn-training-ci-conv",
    }


def test_ci_points_carry_neurobench_metrics(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-training-ci/points.csv").set_index("framework")
    for framework in CPU_FRAMEWORKS:
        row = points.loc[framework]
        assert float(row["nb_footprint_bytes"]) >= 512 * 512 * 4, framework  # the float32 weights at least
        assert float(row["nb_connection_sparsity"]) == 0  # PyTorch's uniform init draws no exact zero
        # the neuron's outputs are its spikes: sparsity is one minus the spike rate the gain was calibrated to
        assert float(row["nb_activation_sparsity"]) == pytest.approx(1 - row["spike_rate"], abs=0.01), framework
        # the input is real-valued, so NeuroBench counts MACs: every input to every neuron at every step
        assert float(row["nb_synops_dense"]) == float(row["nb_synops_effective_macs"]) == 100 * 512 * 512
        assert float(row["nb_synops_effective_acs"]) == 0
    assert float(points.loc["snntorch", "nb_membrane_updates"]) == 100 * 512  # every neuron, every step
    for framework in ("torch", "norse", "sinabs", "spikingjelly", "rockpool"):
        assert points.loc[framework, "nb_membrane_updates"].startswith("not measurable: "), framework


def test_memory_strategies_run_through_the_workflow(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-training-ci-memory/points.csv")
    ran = points[points["status"] == "ok"].set_index(["framework", "strategy_id"])
    expected = {("torch", s) for s in ("vanilla", "checkpoint-neuron", "checkpoint-time-c10")}
    expected |= {("spikingjelly", s) for s in ("vanilla", "checkpoint-neuron", "checkpoint-time-c10", "library-c10")}
    expected |= {("rockpool", "vanilla"), ("rockpool", "checkpoint-neuron")}
    assert set(ran.index) == expected
    assert ran["valid"].all() and ran["gradient_passed"].all()
    assert ran["memory_source"].eq("torch.profiler profile_memory").all()
    for (framework, strategy), row in ran.iterrows():
        assert row["step_peak_mb"] >= row["kept_mb"] > 0, (framework, strategy)
        if strategy != "vanilla":
            assert row["gradient_max_rel_diff"] <= 1e-5
            # Rockpool: recomputing its indexed loop in the backward pass holds more than storing it (docs/families.md).
            if framework != "rockpool":
                assert row["kept_mb"] < ran.loc[(framework, "vanilla"), "kept_mb"], (framework, strategy)
            assert str(row["nb_footprint_bytes"]).startswith("not measured: computed on the vanilla point")
    skipped = points[points["status"] == "skipped"].set_index(["framework", "strategy_id"])["failure_reason"]
    assert "not offered" in skipped[("torch", "library-c10")]
    assert "vmem[0].detach()" in skipped[("rockpool", "checkpoint-time-c10")]


def test_conv_network_runs_through_the_workflow(ci_run):
    workdir, _ = ci_run
    points = pd.read_csv(workdir / "results/snn-training-ci-conv/points.csv")
    ran = points[points["status"] == "ok"].set_index("strategy_id")
    assert set(ran.index) == {"vanilla", "checkpoint-neuron"} and (ran["framework"] == "torch").all()
    assert (ran["architecture"] == "conv-bn").all() and ran["valid"].all()
    assert ran.loc["checkpoint-neuron", "gradient_max_rel_diff"] <= 1e-5
    # every block calibrated to the target rate: the mean over blocks is on it
    assert ran["spike_rate"].sub(ran["target_rate"]).abs().lt(0.1 * ran["target_rate"]).all()
    assert ran.loc["checkpoint-neuron", "kept_mb"] < ran.loc["vanilla", "kept_mb"]
    # NeuroBench on the vanilla point: the first convolution's real-valued input counts as MACs, the rest as ACs
    vanilla = ran.loc["vanilla"]
    assert float(vanilla["nb_synops_effective_macs"]) > 0 and float(vanilla["nb_synops_effective_acs"]) > 0
    assert vanilla["nb_membrane_updates"].startswith("not measurable: ")
    skipped = points[points["status"] == "skipped"]
    assert set(skipped["framework"]) == {"rockpool"} and len(skipped) == 2
    assert skipped["failure_reason"].str.contains("not offered: Rockpool has no convolution module").all()
    record = workdir / "results/snn-training-ci-conv/torch/cpu_float32_highest_unbind_vanilla/conv-bn_n32_T10_B2/seed1"
    assert (record / "record.json").exists()


GRAPH_NODES = """
import json, sys
import torch
from snnbench.training import lif
from snnbench.training.spec import NEURON

steps, batch, n = 50, 2, 8
counts = {}
for loop in ("index", "unbind"):
    current = torch.randn(steps, batch, n, requires_grad=True)
    node, seen, names = lif.ReferenceLIF(NEURON, loop)(current).grad_fn, set(), []
    stack = [node]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(type(node).__name__)
        stack += [parent for parent, _ in node.next_functions]
    counts[loop] = {"select": names.count("SelectBackward0"), "unbind": names.count("UnbindBackward0")}
json.dump({"steps": steps, "counts": counts}, sys.stdout)
"""


def test_indexing_x_t_gives_a_backward_node_per_step():
    """x[t] from a tensor that needs gradients adds one SelectBackward node per step, each writing a
    full-size [T, B, n] gradient (T^2 B n values in all); unbind adds one node for the sequence
    (T B n values). Counted in the autograd graph, not timed: the timing is the benchmark's and
    the training_time_loop figure's."""
    python = REPO / ".venv-torch" / "bin" / "python"
    if not python.exists():
        pytest.skip("environment torch not installed (make env-torch)")
    out = subprocess.run([str(python), "-c", GRAPH_NODES], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    steps, counts = result["steps"], result["counts"]
    assert counts["index"] == {"select": steps, "unbind": 0}
    assert counts["unbind"] == {"select": 0, "unbind": 1}
    # Gradient values written into the input's shape: one full tensor per node.
    assert counts["index"]["select"] == steps * counts["unbind"]["unbind"]


def test_both_time_loops_run_through_the_workflow(ci_run):
    workdir, _ = ci_run
    loop = pd.read_csv(workdir / "results/snn-training-ci-loop/points.csv")
    assert (loop["status"] == "ok").all()
    assert set(loop["loop"]) == {"index", "unbind"}
    assert loop["backward_median_s"].gt(0).all()


def test_ci_figures_are_made(ci_run):
    workdir, _ = ci_run
    for experiment in ("snn-training-ci", "snn-training-ci-loop", "snn-training-ci-gpu", "snn-training-ci-memory"):
        for name in figures.FIGURES:
            for ext in ("png", "pdf"):
                path = workdir / f"results/{experiment}/figures/{name}.{ext}"
                assert path.stat().st_size > 1000, path


def test_ci_config_is_the_documented_one():
    config = yaml.safe_load((REPO / "config/experiments/snn-training-ci.yaml").read_text())
    block = config["experiments"][0]["snn_training"]
    assert set(CPU_FRAMEWORKS) <= set(block["frameworks"]) and block["n"] == [512] and min(block["T"]) >= 100
