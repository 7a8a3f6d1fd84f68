"""snn-data records -> table rows: the point's parameters, status, the first epoch (cache fill)
and the median of the later epochs split into loading / copy / step, samples/s, what the cache
read and holds, memory, and the verdict whether loading or compute bounds an epoch."""

from __future__ import annotations

from snnbench.records.columns import outcome_columns

PARTS = ("load", "copy", "step", "total")
MB = 1e6


def data_row(rec: dict, benchmark: dict | None = None) -> dict:
    """One snn-data point as columns. Valid: it ran and every epoch trained on every sample."""
    spec = rec["point"]
    loader, dataset, model = spec["loader"], spec["dataset"], spec["model"]
    row = {
        "experiment": spec["experiment"],
        "model_name": spec["model_name"],
        "simulator": spec["simulator"],
        "strategy": loader["strategy"],
        "tensors": loader["tensors"],
        "workers": loader["workers"],
        "pin_memory": loader["pin_memory"],
        "prefetch_factor": loader["prefetch_factor"],
        "shuffle": loader["shuffle"],
        "dataset": dataset["name"],
        "time_bins": dataset["time_bins"],
        "framework": model["name"],
        "hidden": model["hidden"],
        "batch": model["batch"],
        "device": spec["device"],
        "threads": spec["resources"]["threads"],
        "epochs": spec["epochs"],
        "seed": spec["seed"],
        "path": spec["path"],
        **outcome_columns(rec),
    }
    row.update(benchmark or {})
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    row.update(measurement_columns(rec["data"]))
    row["valid"] = all(e["samples"] == row["samples"] for e in rec["data"]["epochs"])
    return row


def measurement_columns(data: dict) -> dict:
    summary, epochs = data["summary"], data["epochs"]
    later = epochs[1:] or epochs
    columns = {f"first_{part}_s": summary["first"][f"{part}_s"] for part in PARTS}
    columns.update({f"later_{part}_s": summary["later_median"][f"{part}_s"] for part in PARTS})
    last = epochs[-1]
    columns.update(
        samples=data["dataset"]["samples"],
        dataset_source=data["dataset"]["source"],
        dataset_class=data["dataset"]["class"],
        first_samples_per_s=summary["first"]["samples_per_s"],
        samples_per_s=summary["later_median"]["samples_per_s"],
        bound=summary["bound"],
        loading_fraction=summary["loading_fraction"],
        first_source_reads=epochs[0]["source_reads"],
        later_source_reads=max(e["source_reads"] for e in later) if epochs[1:] else None,
        cache_files=last["cache_files"],
        cache_disk_mb=last["cache_disk_bytes"] / MB,
        cache_memory_mb=last["cache_memory_bytes"] / MB if last["cache_memory_bytes"] is not None else None,
        cache_gpu_mb=last["cache_gpu_bytes"] / MB if "cache_gpu_bytes" in last else None,
        frames_mb=epochs[0]["source_bytes"] / MB,
        peak_rss_mb=data["memory"]["peak_rss_mb"],
        cuda_max_allocated_mb=data["memory"].get("cuda_max_allocated_mb"),
        device_name=data["device"]["name"],
        tonic_version=data["versions"]["tonic"],
        torch_version=data["versions"]["torch"],
    )
    return columns
