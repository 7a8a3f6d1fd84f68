"""The snn-data family without torch or tonic: config and point expansion, checks, skip reasons,
the synthetic dataset, the table row, and every panel drawn from a small table."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
from conftest import experiment, validated
from snnbench import families, figures, planning
from snnbench.data import spec as data_spec
from snnbench.data.synthetic import SyntheticSHD
from snnbench.dev import data_summary as summary
from snnbench.records import record


def data_experiment(**block) -> dict:
    return {"name": "load", "model": "snn-data", "snn_data": {"strategies": ["naive", "disk"], **block}}


def test_defaults_and_points():
    cfg = validated(data_experiment(workers=[0, 2], tensors=["dense", "sparse"]))
    block = cfg["experiments"][0]["snn_data"]
    assert block["datasets"] == ["synthetic"] and block["epochs"] == 3 and block["models"] == ["lif"]
    points = planning.expand_points(cfg["experiments"][0])
    assert len(points) == 2 * 2 * 2  # strategies x workers x tensors
    paths = {p["path"] for p in points}
    assert "results/load/synthetic/disk_sparse_w2_pageable_pf2/lif_cpu_B64/seed1" in paths
    assert "results/load/synthetic/naive_dense_w0_pageable_pf0/lif_cpu_B64/seed1" in paths
    assert all(p["model_name"] == "snn-data" and p["simulator"] == p["loader"]["strategy"] for p in points)


def test_prefetching_without_workers_is_one_point():
    cfg = validated(data_experiment(prefetch_factor=[2, 4], workers=[0, 1]))
    paths = sorted(p["path"] for p in planning.expand_points(cfg["experiments"][0]))
    assert len(paths) == 2 * (1 + 2)  # w0: no prefetching; w1: pf2 and pf4
    assert sum("_w0_" in p for p in paths) == 2


def test_gpu_strategy_only_on_cuda_points_and_needs_cuda():
    cfg = validated(data_experiment(strategies=["naive", "gpu"], devices=["cpu", "cuda"]))
    points = planning.expand_points(cfg["experiments"][0])
    assert {(p["loader"]["strategy"], p["device"]) for p in points} == {
        ("naive", "cpu"),
        ("naive", "cuda"),
        ("gpu", "cuda"),
    }
    with pytest.raises(planning.ConfigRefused, match="add cuda to snn_data.devices"):
        validated(data_experiment(strategies=["gpu"]))


def test_real_dataset_needs_a_root():
    with pytest.raises(planning.ConfigRefused, match="data_root"):
        validated(data_experiment(datasets=["shd"]))
    cfg = validated(data_experiment(datasets=["shd"], data_root="/nowhere"))
    spec = planning.expand_points(cfg["experiments"][0])[0]
    assert spec["dataset"]["classes"] == 20
    assert data_spec.missing_files(spec["dataset"]) == ["/nowhere/SHD/shd_train.h5.zip", "/nowhere/SHD/shd_train.h5"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"strategies": ["cached"]}, "'cached' is not one of"),
        ({"epochs": 1}, "1 is less than the minimum of 2"),
        ({"tensors": ["coo"]}, "'coo' is not one of ['dense', 'sparse']"),
        ({"workers": [-1]}, "-1 is less than the minimum of 0"),
        ({"n": [512]}, "'n' was unexpected"),
    ],
)
def test_bad_data_block_names_key(change, message):
    with pytest.raises(planning.ConfigRefused) as error:
        validated(data_experiment(**change))
    assert message in str(error.value) and ".snn_data" in str(error.value)


def test_repeated_values_are_refused():
    with pytest.raises(planning.ConfigRefused, match="snn_data.workers must not repeat"):
        validated(data_experiment(workers=[2, 2]))


def test_all_families_side_by_side():
    cfg = validated(experiment(), data_experiment())
    kinds = {p.get("model_name") for p in planning.plan(cfg).points.values()}
    assert kinds == {"pd14", "snn-data"}


def test_skip_reasons():
    spec = planning.expand_points(validated(data_experiment(devices=["cuda"]))["experiments"][0])[0]
    assert data_spec.skip_reason(spec, False, "none here").startswith("no GPU")
    assert data_spec.skip_reason(spec, True) is None
    assert data_spec.skip_reason({**spec, "device": "cpu"}, False) is None


def test_synthetic_dataset_is_seeded_and_shd_shaped():
    data = SyntheticSHD(5, seed=7)
    events, label = data[3]
    again, label_again = SyntheticSHD(5, seed=7)[3]
    assert np.array_equal(events, again) and label == label_again
    assert events.dtype.names == ("t", "x", "p") and len(data) == 5
    assert 0 <= events["x"].min() and events["x"].max() < 700 and np.all(np.diff(events["t"]) >= 0)
    assert 0.8e6 * 0.99 < events["t"].max() < 1.2e6 and 5000 < events.size < 12000  # ~1 s, ~8 000 events
    assert not np.array_equal(events, SyntheticSHD(5, seed=8)[3][0])
    with pytest.raises(IndexError):
        data[5]


def fake_record(strategy: str, framework: str, seed: int, later: float, status: str = "ok") -> dict:
    cfg = validated({**data_experiment(strategies=[strategy], models=[framework]), "seeds": [seed]})
    spec = planning.expand_points(cfg["experiments"][0])[0]
    rec = record.new(spec)
    rec["status"], rec["wall_time_s"] = status, 1.0
    if status != "ok":
        rec["failure"] = {"reason": "no GPU: none here"}
        return rec
    epochs = []
    for epoch, total in enumerate([3.0, later, later], start=1):
        reads = 256 if epoch == 1 or strategy == "naive" else 0
        epochs.append(
            {"epoch": epoch, "load_s": total * 0.8, "copy_s": total * 0.05, "step_s": total * 0.15,
             "total_s": total, "samples": 256, "batches": 4, "samples_per_s": 256 / total, "rss_mb": 300.0,
             "source_reads": reads, "source_bytes": reads * 1000, "cache_files": 256 if strategy == "disk" else 0,
             "cache_disk_bytes": 5_000_000 if strategy == "disk" else 0,
             "cache_memory_bytes": 14_000_000 if strategy == "memory" else None}
        )  # fmt: skip
    first = {k: epochs[0][k] for k in ("load_s", "copy_s", "step_s", "total_s", "samples_per_s")}
    later_median = {k: epochs[1][k] for k in first}
    rec["data"] = {
        "versions": {"tonic": "1.7.0", "torch": "2.13.0", "numpy": "2.4.6", "h5py": "3.16.0"},
        "dataset": {"source": "synthetic", "class": "SyntheticSHD", "samples": 256},
        "device": {"type": "cpu", "name": "x86_64"},
        "epochs": epochs,
        "summary": {"first": first, "later_median": later_median, "bound": "loading", "loading_fraction": 0.85},
        "memory": {"peak_rss_mb": 400.0},
    }
    return rec


def small_table() -> pd.DataFrame:
    records = [fake_record(s, m, seed, later) for s, later in (("naive", 3.0), ("disk", 1.0), ("memory", 0.5))
               for m in ("lif", "linear") for seed in (1, 2)]  # fmt: skip
    records.append(fake_record("naive", "lif", 3, 1.0, status="skipped"))
    for rec in records:
        record.validate(rec)
    return pd.DataFrame([families.of_spec(r["point"]).row(r, {}) for r in records])


def test_rows_hold_both_epochs_the_cache_and_the_verdict():
    table = small_table()
    disk = table[(table["strategy"] == "disk") & (table["valid"])].iloc[0]
    assert disk["first_total_s"] == 3.0 and disk["later_total_s"] == 1.0
    assert disk["first_source_reads"] == 256 and disk["later_source_reads"] == 0 and disk["cache_files"] == 256
    assert disk["bound"] == "loading" and disk["cache_disk_mb"] == 5.0 and disk["dataset_source"] == "synthetic"
    skipped = table[table["status"] == "skipped"].iloc[0]
    assert not skipped["valid"] and skipped["failure_reason"].startswith("no GPU")


def test_speedups_and_summary():
    table = small_table()
    gains = figures.snn_data.speedups(table).set_index(["framework", "strategy"])["speedup"]
    assert gains[("lif", "disk")] == pytest.approx(3.0) and gains[("linear", "memory")] == pytest.approx(6.0)
    printed = summary.summary(table)
    assert printed.loc[("lif", "naive"), "speed-up"] == pytest.approx(1.0)
    assert printed.loc[("linear", "disk"), "seeds"] == 2


def test_every_panel_draws_each_strategy(tmp_path):
    table = small_table()
    data = figures.PanelData(table, series=families.get("snn-data").series)
    for name, panels in families.get("snn-data").figures({}).items():
        fig = figures.draw(panels, data, png=str(tmp_path / f"{name}.png"))
        assert (tmp_path / f"{name}.png").stat().st_size > 1000
        ticks = " ".join(t.get_text() for ax in fig.axes for t in ax.get_xticklabels())
        if name != "data_speedup":
            assert all(s in ticks for s in ("naive", "disk", "memory")), ticks
    empty = figures.PanelData(table[table["status"] != "ok"].copy(), series="strategy")
    figures.draw(["data_epoch_parts", "data_speedup", "data_cache_footprint", "data_not_run"], empty)


def test_summary_names_its_family_figures():
    config = copy.deepcopy(validated(data_experiment()))
    assert families.get("snn-data").figures(config) == families.get("snn-data").figures({})
