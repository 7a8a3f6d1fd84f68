"""The timed epochs of an snn-data point: per epoch the time spent waiting for the loader's next
batch (loading), moving it to the device (host -> device copy, sparse batches made dense there)
and in the training step, each region synchronised on a GPU; plus what the source and the cache
did in that epoch."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import torch

from snnbench.machine.process_memory import process_mb


def to_device(frames: torch.Tensor, targets: torch.Tensor, device: torch.device, non_blocking: bool):
    """A batch [T, B, 1, 700] (dense or sparse int16 counts) on the device as float [T, B, 700]."""
    x = frames.to(device, non_blocking=non_blocking)
    if x.is_sparse:
        x = x.to_dense()
    return x.squeeze(2).float(), targets.to(device, non_blocking=non_blocking)


def timed_epoch(batches: Iterable, step: Callable, move: Callable, sync: Callable, keep: list | None = None) -> dict:
    """One pass over `batches`; `keep` collects the batches as they reach the device (GPU cache)."""
    load = copy = compute = 0.0
    samples = count = 0
    start = time.perf_counter()
    iterator = iter(batches)
    while True:
        t0 = time.perf_counter()
        try:
            frames, targets = next(iterator)
        except StopIteration:
            break
        t1 = time.perf_counter()
        x, y = move(frames, targets)
        sync()
        t2 = time.perf_counter()
        step(x, y)
        sync()
        t3 = time.perf_counter()
        load, copy, compute = load + t1 - t0, copy + t2 - t1, compute + t3 - t2
        samples, count = samples + int(y.shape[0]), count + 1
        if keep is not None:
            keep.append((x, y))
    total = time.perf_counter() - start
    return {
        "load_s": load,
        "copy_s": copy,
        "step_s": compute,
        "total_s": total,
        "samples": samples,
        "batches": count,
        "samples_per_s": samples / total if total > 0 else None,
    }


class DeviceBatches:
    """Batches kept on the device, served in a fresh random order each epoch (the gpu strategy)."""

    def __init__(self, kept: list, seed: int):
        self.kept, self.generator = kept, torch.Generator().manual_seed(seed)

    def __iter__(self):
        return (self.kept[i] for i in torch.randperm(len(self.kept), generator=self.generator).tolist())


def run_epochs(spec: dict, loader, trainer, device: torch.device, observe: Callable) -> list[dict]:
    """All epochs of a point; `observe()` says what the source and the cache hold after each."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    pin = spec["loader"]["pin_memory"] and device.type == "cuda"

    def move(frames, targets):
        return to_device(frames, targets, device, pin)

    gpu_cache = spec["loader"]["strategy"] == "gpu"
    kept: list = []
    epochs = []
    for epoch in range(spec["epochs"]):
        if gpu_cache and epoch > 0:
            result = timed_epoch(DeviceBatches(kept, spec["seed"] + epoch), trainer.step, lambda x, y: (x, y), sync)
        else:
            result = timed_epoch(loader, trainer.step, move, sync, kept if gpu_cache else None)
        result.update(epoch=epoch + 1, rss_mb=process_mb("VmRSS"), **observe())
        if gpu_cache:
            result["cache_gpu_bytes"] = int(sum(x.nbytes + y.nbytes for x, y in kept))
        epochs.append(result)
    return epochs
