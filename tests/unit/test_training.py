"""The snn-training family without torch: config kind and point expansion, skip reasons, the FLOP
sanity check (also on the published 2023 numbers), the spike-train comparison, the table row."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
from conftest import SCHEMA, experiment, validated
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate
from snnbench import families, planning
from snnbench.figures import training as training_figures
from snnbench.machine import gpu
from snnbench.records import record
from snnbench.tables import collect
from snnbench.training import equivalence, sanity
from snnbench.training import spec as training_spec

# A record's provenance as the tests' records carry it (the parts the training rows read).
PROVENANCE = {
    "started_utc": "x",
    "workflow": {"git_commit": None, "git_dirty": None},
    "benchmark_hash": "h",
    "python": {},
    "packages": {},
    "host": {"hostname": "h", "cpu_model": "c", "load_average_1_5_15": [1.0, 1.0, 1.0]},
    "environment": {},
}


def training_experiment(**block) -> dict:
    exp = {
        "name": "train",
        "model": "snn-training",
        "snn_training": {"frameworks": ["torch", "snntorch"], "n": [512], "T": [100], "batch": [10], **block},
    }
    return exp


def test_training_experiment_defaults_and_points():
    cfg = validated(training_experiment(time_loops=["unbind", "index"], n=[256, 512]))
    block = cfg["experiments"][0]["snn_training"]
    assert block["devices"] == ["cpu"] and block["dtypes"] == ["float32"]
    assert block["repetitions"] == {"cpu": 5, "cuda": 20}
    assert cfg["experiments"][0]["seeds"] == [1]
    points = planning.expand_points(cfg["experiments"][0])
    assert len(points) == 2 * 2 * 2  # frameworks x loops x n
    paths = {p["path"] for p in points}
    assert "results/train/snntorch/cpu_float32_highest_index_vanilla/linear_n256_T100_B10/seed1" in paths
    assert len(paths) == len(points)
    assert all(p["timing"]["repetitions"] == 5 for p in points)


def test_pd14_and_training_experiments_side_by_side():
    cfg = validated(experiment(), training_experiment(devices=["cpu", "cuda"]))
    campaign = planning.plan(cfg)
    points = campaign.points
    kinds = sorted({p.get("model_name") for p in points.values()})
    assert kinds == ["pd14", "snn-training"]
    cuda = [p for p in points.values() if p.get("device") == "cuda"]
    assert {p["timing"]["repetitions"] for p in cuda} == {20}
    # The request the execute rule makes (common.smk's get_point_mem_mb).
    assert campaign.family[cuda[0]["experiment"]].mem_mb(cuda[0], cfg) > 1500


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"frameworks": ["snntorh"]}, "'snntorh' is not one of"),
        ({"devices": ["tpu"]}, "'tpu' is not one of ['cpu', 'cuda']"),
        ({"repetitions": {"cpu": 3}}, "3 is less than the minimum of 5"),
        ({"repetitions": {"cuda": 10}}, "10 is less than the minimum of 20"),
        ({"time_loops": ["slice"]}, "'slice' is not one of ['unbind', 'index']"),
        ({"n": [0]}, "0 is less than the minimum of 1"),
        ({"threads_per_rank": [1]}, "'threads_per_rank' was unexpected"),
    ],
)
def test_bad_training_block_names_key(change, message):
    with pytest.raises(planning.ConfigRefused) as error:
        validated(training_experiment(**change))
    assert message in str(error.value)
    assert "experiments[0].snn_training" in str(error.value)


def test_training_block_is_required_and_pd14_keys_rejected():
    exp = training_experiment()
    del exp["snn_training"]
    with pytest.raises(WorkflowError, match="'snn_training' is a required property"):
        validate({"experiments": [copy.deepcopy(exp)]}, SCHEMA)
    exp = training_experiment(pd14={"neuron_scale": 0.1})
    exp["pd14"] = exp["snn_training"].pop("pd14")
    with pytest.raises(WorkflowError, match="'pd14' was unexpected"):
        validate({"experiments": [exp]}, SCHEMA)


def test_repeated_grid_values_rejected():
    with pytest.raises(planning.ConfigRefused, match=r"snn_training.n must not repeat: \[512, 512\]"):
        validated(training_experiment(n=[512, 512]))


def test_a_warmup_whose_least_exceeds_its_most_is_refused():
    with pytest.raises(planning.ConfigRefused) as refused:
        validated(training_experiment(warmup_min_steps=20, warmup_max_steps=3))
    (line,) = refused.value.problems
    assert line.startswith("experiments[0] (train): snn_training.warmup_min_steps (20)")
    assert "snn_training.warmup_max_steps (3)" in line
    block = validated(training_experiment(warmup_min_steps=5, warmup_max_steps=5))["experiments"][0]["snn_training"]
    assert block["warmup_min_steps"] == block["warmup_max_steps"] == 5  # exactly 5 warm-up steps


def test_memory_strategies_without_vanilla_their_reference_are_refused():
    with pytest.raises(planning.ConfigRefused) as refused:
        validated(training_experiment(strategies=["checkpoint-time"]))
    (line,) = refused.value.problems
    assert line.startswith("experiments[0] (train): snn_training.strategies ['checkpoint-time'] lacks vanilla")
    assert "training_memory_tradeoff" in line


def point(framework="torch", device="cpu", time_loop="unbind") -> dict:
    cfg = validated(training_experiment(frameworks=[framework], devices=[device], time_loops=[time_loop]))
    return planning.expand_points(cfg["experiments"][0])[0]


def test_skip_reasons():
    assert training_spec.skip_reason(point()) is None
    assert "CUDA-only" in training_spec.skip_reason(point("sinabs-exodus"))
    assert "Python 3.10" in training_spec.skip_reason(point("lava-dl"))
    assert "runs the loop over time steps itself" in training_spec.skip_reason(point("sinabs", time_loop="index"))
    assert training_spec.skip_reason(point("snntorch", time_loop="index")) is None


def test_cuda_point_without_gpu_is_recorded_as_skipped(tmp_path):
    present, _ = gpu.present()
    if present:
        pytest.skip("this machine has a GPU: the point would run")
    spec = point(device="cuda")
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    outputs = {"record.json": tmp_path / "record.json"}
    rec = families.get("snn-training").run_point(spec, tmp_path / "spec.json", outputs, tmp_path / "log", {}, 60)
    assert rec["status"] == "skipped" and rec["failure"]["reason"].startswith("no GPU")
    row = collect.point_row(json.loads((tmp_path / "record.json").read_text()), {})
    assert row["status"] == "skipped" and not row["valid"] and row["failure_reason"].startswith("no GPU")


def test_sanity_bound_is_two_t_b_n_squared_over_peak():
    check = sanity.check({"forward": 1.0, "backward": 1.0, "step": 2.0}, 500, 10, 16384, peak_flops=1e12)
    assert check["flops_forward"] == 2 * 500 * 10 * 16384**2
    assert check["min_time_s"]["forward"] == pytest.approx(2.68435456)
    assert not check["passed"] and len(check["problems"]) == 3
    assert sanity.check({"forward": 3.0, "backward": 3.0, "step": 6.0}, 500, 10, 16384, 1e12)["passed"]


def test_sanity_rejects_the_published_unsynchronised_gpu_times():
    """The deliberately broken input: 2023 GPU times taken without synchronisation."""
    ref = training_figures.read_reference_2023()
    peak, source = sanity.gpu_peak_flops(training_figures.REFERENCE_2023_GPU, "float32", "highest")
    assert "RTX 2070" in source
    rejected = []
    for _, row in ref.dropna().iterrows():
        check = sanity.check({row["pass"]: row["time_s"]}, 500, 10, row["n"], peak)
        if not check["passed"]:
            rejected.append((row["library"], row["n"], row["pass"]))
    assert ("SpikingJelly CuPy", 16384, "forward") in rejected
    assert ("SpikingJelly CuPy", 4096, "forward") in rejected
    assert all(n >= 4096 for _, n, _ in rejected)  # at n = 512 launch overheads dominate


def test_gpu_and_cpu_peaks_are_upper_bounds():
    h100, _ = sanity.gpu_peak_flops("NVIDIA H100 80GB HBM3", "float32", "highest")
    tf32, _ = sanity.gpu_peak_flops("NVIDIA H100 80GB HBM3", "float32", "high")
    unknown, source = sanity.gpu_peak_flops("Some Future GPU", "float32", "highest")
    assert h100 == 67e12 and tf32 > h100 and unknown > tf32 and "unknown GPU" in source
    cpuinfo = "flags\t\t: fpu avx2 fma avx512f\ncpu MHz\t\t: 2000.0\n"
    peak, source = sanity.cpu_peak_flops(2, cpuinfo=cpuinfo, max_khz=3_000_000)
    assert peak == 2 * 3e9 * 64 and "AVX-512" in source


def test_equivalence_check_passes_identical_and_fails_a_different_neuron():
    rng = np.random.default_rng(0)
    spikes = (rng.random((50, 4, 64)) < 0.1).astype(np.float32)
    grad = rng.standard_normal((64, 64))
    same = equivalence.compare({"spikes": spikes, "grad": grad}, {"spikes": spikes.copy(), "grad": grad})
    assert same["spike_mismatch_fraction"] == 0 and same["grad_rel_diff"] == 0 and not equivalence.judge(same)
    broken = spikes.copy()
    broken[10:, :, :8] = 1 - broken[10:, :, :8]  # a neuron population firing differently from step 10
    diff = equivalence.compare({"spikes": spikes, "grad": grad}, {"spikes": broken, "grad": grad})
    problems = equivalence.judge(diff)
    assert diff["first_differing_step"] == 10 and any("differ from the reference" in p for p in problems)


def test_training_record_schema_and_row(tmp_path):
    spec = point()
    timing = {
        k: {"median": 0.1, "q1": 0.09, "q3": 0.12, "iqr": 0.03, "min": 0.08, "max": 0.2, "mean": 0.1, "n": 5}
        for k in ("forward_s", "backward_s", "step_s")
    }
    timing["warmup"] = {"steps": 2, "settled": True, "first_step_s": 0.5, "compile_s": 0.3, "samples": [0.5, 0.2]}
    rec = {
        "schema_version": 1,
        "point": spec,
        "status": "ok",
        "failure": None,
        "provenance": copy.deepcopy(PROVENANCE),
        "wall_time_s": 3.0,
        "training": {
            "framework": {"name": "torch", "api": "a", "version": "2", "torch_version": "2", "time_loop": "unbind"},
            "device": {"type": "cpu", "name": "x86_64"},
            "timing": timing,
            "memory": {"peak_rss_mb": 300.0},
            "activity": {"spike_rate": 0.1, "target_rate": 0.1, "reference_rate": 0.1, "input_gain": 20.0},
            "sanity": sanity.check({"forward": 0.1}, 100, 10, 512, 1e11),
        },
    }
    record.validate(rec)
    row = collect.point_row(rec, {})
    assert row["framework"] == "torch" and row["step_median_s"] == 0.1 and row["compile_s"] == 0.3 and row["valid"]
    bad = copy.deepcopy(rec)
    del bad["training"]["timing"]
    with pytest.raises(Exception, match="'timing' is a required property"):
        record.validate(bad)
    frame = pd.DataFrame([row])
    assert training_figures.not_run_lines(frame) == []


def training_points() -> pd.DataFrame:
    """A points table of two libraries at two widths (seeds 1, 2), a point failing the FLOP check,
    an index loop and a skipped GPU point."""
    rows = []
    for framework, speed in (("torch", 1.0), ("snntorch", 2.0)):
        for n in (256, 512):
            for seed in (1, 2):
                base = speed * n / 256 * 0.01 * seed
                row = {"framework": framework, "loop": "unbind", "device": "cpu", "status": "ok", "n": n, "T": 100}
                for k, name in enumerate(training_figures.PASSES):
                    median = base * (k + 1)
                    row.update({f"{name}_median_s": median, f"{name}_q1_s": 0.9 * median, f"{name}_q3_s": 1.2 * median})
                row.update(seed=seed, valid=True, failure_reason=None, min_forward_s=0.001 * n / 256, compile_s=0.5)
                row.update(spike_rate=0.1 + 0.01 * seed, target_rate=0.1, peak_rss_mb=100.0 * n / 256 + seed)
                rows.append(row)
    slow = {f"backward_{q}_s": 5 * rows[0][f"backward_{q}_s"] for q in ("median", "q1", "q3")}
    index = {**rows[0], "loop": "index", **slow}
    too_fast = {**rows[-1], "framework": "norse", "valid": False, "forward_median_s": 1e-6}
    skipped = {**rows[0], "device": "cuda", "status": "skipped", "valid": False, "failure_reason": "no GPU here"}
    return pd.DataFrame([*rows, index, too_fast, skipped]).assign(experiment="train")


def test_training_figures_are_panels_of_the_one_registry(tmp_path):
    from snnbench import figures

    points = training_points()
    data = figures.PanelData(points, series="framework")
    for name, panels in families.get("snn-training").figures({}).items():
        assert all(p in figures.PANELS for p in panels), name
        fig = figures.draw(panels, data, tmp_path / f"{name}.png", tmp_path / f"{name}.pdf", title="train")
        assert (tmp_path / f"{name}.png").read_bytes()[:4] == b"\x89PNG" and fig.dpi > 0
        assert figures.caption(panels)  # the rule's report caption comes from the panels
    time_fig = figures.draw(families.get("snn-training").figures({})["training_time"], data)
    forward = time_fig.axes[0]
    labels = [t.get_text() for t in forward.get_legend().get_texts()]
    assert labels == ["snntorch", "torch", "torch (x[t])", "FLOP bound", "fails sanity check"]
    torch = points[(points["framework"] == "torch") & (points["loop"] == "unbind") & (points["status"] == "ok")]
    expected = torch.groupby("n")["forward_median_s"].median().to_list()
    torch_line = forward.containers[labels.index("torch")].lines[0]  # error bars in legend order
    assert list(torch_line.get_ydata()) == pytest.approx(expected)  # median over seeds
    crosses = next(c for c in forward.collections if c.get_label() == "fails sanity check").get_offsets()
    assert np.asarray(crosses)[:, 1].tolist() == [1e-6]
    not_run = time_fig.axes[4].texts[0].get_text()
    assert not_run.startswith("Not run:") and "skipped: torch: no GPU here" in not_run
    assert [ax.get_title(loc="left") for ax in time_fig.axes] == ["A", "B", "C", "D", "E"]


def test_training_panels_say_when_nothing_ran():
    from snnbench import figures

    data = figures.PanelData(training_points().assign(status="failed", valid=False), series="framework")
    fig = figures.draw(families.get("snn-training").figures({})["training_memory"], data)
    assert [ax.texts[0].get_text() for ax in fig.axes] == ["no cpu points", "no cuda points"]
    loop = figures.draw(["training_time_loop"], data)
    assert loop.axes[0].texts[0].get_text() == "no time_loop 'index' points in this experiment"


def test_memory_strategies_expand_with_chunks_only_where_they_apply():
    block = {"strategies": ["vanilla", "checkpoint-neuron", "checkpoint-time", "library"], "chunks": [10, 25]}
    cfg = validated(training_experiment(frameworks=["spikingjelly"], **block))
    points = planning.expand_points(cfg["experiments"][0])
    ids = sorted(p["path"].split("/")[3].removeprefix("cpu_float32_highest_unbind_") for p in points)
    assert ids == [
        "checkpoint-neuron",
        "checkpoint-time-c10",
        "checkpoint-time-c25",
        "library-c10",
        "library-c25",
        "vanilla",
    ]
    assert {p["timing"]["memory_repetitions"] for p in points} == {3}  # the schema's default
    defaults = validated(training_experiment())["experiments"][0]["snn_training"]
    assert defaults["strategies"] == ["vanilla"] and defaults["chunks"] == [25]
    with pytest.raises(planning.ConfigRefused, match="'recompute' is not one of"):
        validated(training_experiment(strategies=["recompute"]))


def test_strategies_a_library_does_not_offer_are_skipped_with_why():
    def strategy_point(framework, strategy):
        cfg = validated(training_experiment(frameworks=[framework], strategies=["vanilla", strategy], chunks=[10]))
        return planning.expand_points(cfg["experiments"][0])[-1]  # the strategy's point, after vanilla's

    assert training_spec.skip_reason(strategy_point("spikingjelly", "library")) is None
    assert "not offered" in training_spec.skip_reason(strategy_point("snntorch", "library"))
    assert "vmem[0].detach()" in training_spec.skip_reason(strategy_point("rockpool", "checkpoint-time"))
    for framework in ("torch", "snntorch", "norse", "sinabs", "spikingjelly", "rockpool"):
        assert training_spec.skip_reason(strategy_point(framework, "checkpoint-neuron")) is None


def test_a_strategy_whose_gradients_differ_is_invalid():
    from snnbench.training.rows import training_row

    rec = memory_record("checkpoint-time", chunk=10, passed=False)
    row = training_row(rec)
    assert row["strategy_id"] == "checkpoint-time-c10" and row["sanity_passed"]
    assert not row["valid"] and row["gradient_passed"] is False
    assert row["step_peak_mb"] == 2.0 and row["kept_mb"] == 1.5 and row["memory_source"] == "profiler"
    assert row["peak_phase"] == "forward" and row["backward_peak_mb"] == 1.2 and row["input_mb"] == 0.5
    assert row["nb_membrane_updates"].startswith("not measurable")
    assert training_row(memory_record("checkpoint-time", chunk=10, passed=True))["valid"]


def memory_record(strategy: str, chunk=None, passed=True) -> dict:
    spec = point()
    spec["model"].update(strategy=strategy, chunk=chunk)
    timing = {k: {q: 0.1 for q in ("median", "q1", "q3", "iqr", "min", "max")} for k in ("forward_s", "backward_s")}
    timing["step_s"] = dict(timing["forward_s"])
    timing["warmup"] = {"steps": 2, "settled": True, "first_step_s": 0.5, "compile_s": 0.3}
    step = {"step_peak_mb": 2.0, "forward_peak_mb": 2.0, "backward_peak_mb": 1.2, "peak_phase": "forward"}
    step.update(kept_mb=1.5, saved_tensors_mb=1.6, input_mb=0.5, source="profiler")
    check = {"passed": passed, "max_rel_diff": 0.0 if passed else 0.3, "rtol": 1e-5}
    training = {
        "framework": {"name": "torch", "version": "2", "torch_version": "2", "time_loop": "unbind"},
        "device": {"type": "cpu", "name": "x86_64"},
        "timing": timing,
        "memory": {"peak_rss_mb": 300.0, "step": step},
        "activity": {"spike_rate": 0.1, "target_rate": 0.1, "reference_rate": 0.1, "input_gain": 20.0},
        "sanity": sanity.check({"forward": 0.1}, 100, 10, 512, 1e11),
        "strategy": {"name": strategy, "chunk": chunk, "gradient_check": check},
        "neurobench": {"columns": {"nb_membrane_updates": "not measurable: the reference has no mem"}},
    }
    rec = {"point": spec, "status": "ok", "failure": None, "provenance": copy.deepcopy(PROVENANCE), "wall_time_s": 3.0}
    return {**rec, "training": training}


def memory_points() -> pd.DataFrame:
    """Two libraries, T = 100 / 1000: vanilla, and a strategy at 0.5x memory and half the speed."""
    rows = []
    for framework in ("torch", "spikingjelly"):
        for steps in (100, 1000):
            base = {"framework": framework, "device": "cpu", "n": 256, "T": steps, "batch": 10, "status": "ok"}
            base.update(valid=True, seed=1, peak_rss_mb=400.0)
            rows.append({**base, "strategy_id": "vanilla", "step_median_s": 0.01 * steps, "step_peak_mb": steps})
            rows[-1]["kept_mb"] = 0.6 * steps
            rows.append(
                {**base, "strategy_id": "checkpoint-time-c25", "step_median_s": 0.02 * steps, "step_peak_mb": steps / 2}
            )
            rows[-1]["kept_mb"] = 0.2 * steps
    invalid = {**rows[1], "valid": False, "step_peak_mb": 1.0, "seed": 2}
    return pd.DataFrame([*rows, invalid]).assign(experiment="train")


def test_memory_table_names_a_missing_points_table(tmp_path):
    from snnbench.training import memory_table

    with pytest.raises(SystemExit, match=r"no points table at .*nowhere\.csv: run the experiment first"):
        memory_table.main([str(tmp_path / "nowhere.csv")])


def test_memory_table_gives_ratios_against_vanilla_on_the_same_point():
    from snnbench.training import memory_table

    ratios = memory_table.ratios(memory_points())
    chunked = ratios[ratios["strategy_id"] == "checkpoint-time-c25"]
    assert chunked["memory_ratio"].tolist() == pytest.approx([0.5] * 4)  # the invalid point is left out
    assert chunked["speedup"].tolist() == pytest.approx([0.5] * 4)
    text = memory_table.table(memory_points())
    assert "0.41x, speed-up 2.13x" in text and "0.58x" in text


def test_memory_panels_draw_strategies_and_the_published_references(tmp_path):
    from snnbench import figures

    data = figures.PanelData(memory_points(), series="framework")
    fig = figures.draw(families.get("snn-training").figures({})["training_memory_tradeoff"], data)
    tradeoff = fig.axes[0]
    offsets = np.concatenate([np.asarray(c.get_offsets()) for c in tradeoff.collections])
    assert [2.13, 0.41] in offsets.tolist() and [0.5, 0.5] in offsets.tolist()
    memory = figures.draw(families.get("snn-training").figures({})["training_memory_T"], data)
    labels = [line.get_label() for line in memory.axes[0].get_lines()]
    assert "torch n=256 checkpoint-time-c25" in labels and "spikingjelly n=256 vanilla" in labels
    empty = figures.PanelData(memory_points().assign(status="failed", valid=False), series="framework")
    fig = figures.draw(["training_peak_memory_T"], empty)
    assert fig.axes[0].texts[0].get_text() == "no valid points with step memory"
