"""Run one snn-data point in this (fresh) process: `python -m snnbench.data.run SPEC OUTDIR`.

Runs in envs/tonic.yaml's environment. Builds the dataset (synthetic, or Tonic's SHD / SSC from
files on disk), wraps it in the strategy's cache, loads it with torch's DataLoader, trains the
model for the point's epochs and writes OUTDIR/result.json: status "ok", or "skipped" with the
reason (no GPU, dataset files missing). Disk caches live in OUTDIR and go with it.
"""

from __future__ import annotations

import platform
import statistics
import sys
from importlib import metadata
from pathlib import Path

import tonic
import torch

from snnbench.data import epochs as data_epochs
from snnbench.data import loading
from snnbench.data import spec as data_spec
from snnbench.data.model import Trainer
from snnbench.machine.process_memory import process_mb
from snnbench.run import result as child_result

PARTS = ("load_s", "copy_s", "step_s", "total_s")


def summarise(epochs: list[dict]) -> dict:
    """First epoch (cache fill) and the median of the later ones, and which part bounds an epoch:
    loading (waiting for batches plus the copy) or compute (the training step)."""
    later = epochs[1:] or epochs
    median = {k: statistics.median(e[k] for e in later) for k in (*PARTS, "samples_per_s")}
    data_s = median["load_s"] + median["copy_s"]
    return {
        "first": {k: epochs[0][k] for k in (*PARTS, "samples_per_s")},
        "later_median": median,
        "bound": "loading" if data_s > median["step_s"] else "compute",
        "loading_fraction": data_s / median["total_s"] if median["total_s"] > 0 else None,
    }


def versions() -> dict:
    names = ("tonic", "torch", "numpy", "h5py")
    return {name: metadata.version(name) for name in names}


def run(spec: dict, outdir: Path) -> dict:
    result = {"status": "ok", "versions": versions()}
    if spec["device"] == "cuda" and not torch.cuda.is_available():
        return {**result, "status": "skipped", "reason": f"no GPU: torch {torch.__version__} sees no CUDA device"}
    missing = data_spec.missing_files(spec["dataset"])
    if missing:
        return {**result, "status": "skipped", "reason": f"dataset files not on disk (never downloaded): {missing}"}
    torch.set_num_threads(spec["resources"]["threads"])
    device = torch.device(spec["device"])
    reads = loading.SourceReads()
    source, facts = loading.source_dataset(
        spec["dataset"], spec["seed"], loading.CountedFrames(spec["dataset"]["time_bins"], reads)
    )
    cache_dir = outdir / "cache"
    dataset = loading.wrap(source, spec["loader"]["strategy"], cache_dir)
    batches = loading.loader(dataset, spec)
    model = spec["model"]
    trainer = Trainer(model["name"], model["hidden"], spec["dataset"]["classes"], spec["seed"], device)
    seen = [(0, 0)]

    def observe() -> dict:
        now = reads.snapshot()
        before, seen[0] = seen[0], now
        files, disk = loading.disk_footprint(cache_dir)
        return {
            "source_reads": now[0] - before[0],
            "source_bytes": now[1] - before[1],
            "cache_files": files,
            "cache_disk_bytes": disk,
            "cache_memory_bytes": loading.memory_footprint(dataset),
            "hidden_spike_rate": trainer.model.hidden_rate,
        }

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    epochs = data_epochs.run_epochs(spec, batches, trainer, device, observe)
    memory = {"peak_rss_mb": process_mb("VmHWM")}
    if device.type == "cuda":
        memory["cuda_max_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
    result.update(
        dataset={**facts, "samples": len(dataset), "time_bins": spec["dataset"]["time_bins"]},
        device={"type": device.type, "name": _device_name(device)},
        epochs=epochs,
        summary=summarise(epochs),
        memory=memory,
        trainable_parameters=trainer.parameters(),
        tonic_version=tonic.__version__,
    )
    return result


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    child_result.main(sys.argv[1:], run, versions=lambda done: done["versions"])
