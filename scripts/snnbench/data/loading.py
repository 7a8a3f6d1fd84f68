"""Datasets, caches and loaders of an snn-data point, all from Tonic and torch: Tonic's SHD / SSC
classes (files already on disk) or the synthetic dataset, Tonic's ToFrame transform, Tonic's
DiskCachedDataset / MemoryCachedDataset, Tonic's PadTensors collation and torch's DataLoader.

A shared counter (process-shared memory, seen by the loader's worker processes) counts each run
of the transform and the bytes of frames it made: the reads from the source. A cache that works
reads every sample from the source in epoch 1 and none later.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import numpy as np
import tonic
import torch
from torch.utils.data import DataLoader, Subset

from snnbench.data import spec as data_spec
from snnbench.data.synthetic import SyntheticSHD


class SourceReads:
    """Counts transform runs and the bytes of their output, across worker processes."""

    def __init__(self):
        self._reads = multiprocessing.Value("q", 0)
        self._bytes = multiprocessing.Value("q", 0)

    def add(self, frames: np.ndarray) -> None:
        with self._reads.get_lock():
            self._reads.value += 1
            self._bytes.value += int(frames.nbytes)

    def snapshot(self) -> tuple[int, int]:
        return self._reads.value, self._bytes.value


class CountedFrames:
    """Tonic's ToFrame (events -> [T, 1, 700] int16 counts in T time bins), counted."""

    def __init__(self, time_bins: int, reads: SourceReads):
        self.to_frame = tonic.transforms.ToFrame(sensor_size=data_spec.SENSOR_SIZE, n_time_bins=time_bins)
        self.reads = reads

    def __call__(self, events: np.ndarray) -> np.ndarray:
        frames = self.to_frame(events)
        self.reads.add(frames)
        return frames


def _no_download(self):
    raise FileNotFoundError(
        f"{type(self).__name__} files are not under {self.location_on_system}; snnbench never downloads"
    )


def source_dataset(dataset: dict, seed: int, transform) -> tuple[object, dict]:
    """The point's dataset with `transform`, and what it is (for the record)."""
    if dataset["name"] == "synthetic":
        syn = dataset["synthetic"]
        source = SyntheticSHD(dataset["samples"], seed, syn["rate_hz"], syn["duration_ms"], syn["classes"], transform)
        return source, {"source": "synthetic", "class": "snnbench.data.synthetic.SyntheticSHD", **syn}
    folder, _ = data_spec.REAL_DATASETS[dataset["name"]]
    cls = type(folder, (getattr(tonic.datasets, folder),), {"download": _no_download})
    full = cls(save_to=str(Path(dataset["root"]).expanduser()), train=True, transform=transform)
    count = min(dataset["samples"], len(full))
    facts = {"source": "tonic", "class": f"tonic.datasets.{folder}", "root": dataset["root"], "available": len(full)}
    return Subset(full, range(count)), facts


class Collate:
    """Tonic's PadTensors (time first: [T, B, 1, 700]); sparse COO tensors where asked."""

    def __init__(self, tensors: str):
        self.pad = tonic.collation.PadTensors(batch_first=False)
        self.sparse = tensors == "sparse"

    def __call__(self, batch):
        frames, targets = self.pad(batch)
        return (frames.to_sparse() if self.sparse else frames), targets


def wrap(source, strategy: str, cache_dir: Path):
    """The dataset the loader reads for a strategy (the gpu strategy loads naively, then keeps batches)."""
    cache = data_spec.STRATEGIES[strategy].cache
    if cache == "disk":
        return tonic.DiskCachedDataset(source, cache_path=str(cache_dir), reset_cache=True)
    if cache == "memory":
        return tonic.MemoryCachedDataset(source)
    return source


def loader(dataset, spec: dict) -> DataLoader:
    """torch's DataLoader with the point's workers, pinned memory, prefetching and batch size.
    Workers persist across epochs, so caches filled inside them survive to the next epoch."""
    opts, workers = spec["loader"], spec["loader"]["workers"]
    return DataLoader(
        dataset,
        batch_size=spec["model"]["batch"],
        shuffle=opts["shuffle"],
        num_workers=workers,
        pin_memory=opts["pin_memory"] and spec["device"] == "cuda",  # pinning serves host -> GPU copies only
        prefetch_factor=opts["prefetch_factor"] if workers else None,
        persistent_workers=workers > 0,
        collate_fn=Collate(opts["tensors"]),
        generator=torch.Generator().manual_seed(spec["seed"]),
    )


def disk_footprint(cache_dir: Path) -> tuple[int, int]:
    """(files, bytes) of a disk cache."""
    if not cache_dir.is_dir():
        return 0, 0
    files = [e for e in os.scandir(cache_dir) if e.is_file()]
    return len(files), sum(e.stat().st_size for e in files)


def memory_footprint(dataset) -> int | None:
    """Bytes a MemoryCachedDataset holds in this process (None for other datasets)."""
    if not isinstance(dataset, tonic.MemoryCachedDataset):
        return None
    return int(sum(np.asarray(data).nbytes for data, _ in dataset.samples_dict.values()))
