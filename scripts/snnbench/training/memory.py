"""Peak memory of one training step, and what the forward pass keeps for the backward pass.

What is measured, per step (forward, loss = sum of the spikes, backward; the gradients are set to None
before the step, and freeing them is not part of it):

- `step_peak_mb`: the most tensor memory the step held at once beyond what was held before it.
  On CUDA the caching allocator's max_memory_allocated after reset_peak_memory_stats, minus the
  memory allocated before the step. On CPU there is no allocator peak counter: torch's profiler
  (profile_memory=True) reports every allocation and free of the CPU allocator with its size; the
  running sum in time order, from the step's start, peaks at `step_peak_mb`. Neither counts the
  interpreter, the libraries' code, the weights and input allocated before the step, or what
  malloc keeps after a free: the process's peak RSS (`peak_rss_mb`, measured beside) is that
  baseline plus at most this peak, and a free block that glibc keeps mapped counts in RSS only.
- `kept_mb`: tensor memory still held at the end of the forward pass (the graph: what autograd saved
  for the backward pass, the output spikes and a checkpoint's inputs), from the same running sum.
- `saved_tensors_mb`: the bytes autograd saved for the backward pass as seen by
  torch.autograd.graph.saved_tensors_hooks (distinct storages). Tensors saved inside a
  torch.utils.checkpoint region are packed by the checkpoint's own hooks and not seen here: under a
  checkpoint strategy this is what is saved outside the checkpointed regions.
- `rest_mb` = step_peak_mb - kept_mb: the backward pass's own working memory and the gradients.

The profiler adds its own cost, so memory is measured on steps apart from the timed ones.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch
from torch.autograd.graph import saved_tensors_hooks

MB = 2**20
FORWARD_MARK = "snnbench_forward_end"


class SavedBytes:
    """Counts the distinct storages autograd saves for the backward pass while active."""

    def __init__(self):
        self.storages: dict[int, int] = {}

    def pack(self, tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        self.storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    @staticmethod
    def unpack(tensor: torch.Tensor) -> torch.Tensor:
        return tensor

    def hooks(self):
        return saved_tensors_hooks(self.pack, self.unpack)

    @property
    def mb(self) -> float:
        return sum(self.storages.values()) / MB


def _one_step(forward: Callable, saved: SavedBytes, mark: Callable) -> None:
    with saved.hooks():
        out = forward()
    mark()
    loss = out.sum()
    del out
    loss.backward()
    del loss


def _allocations(prof) -> tuple[list[tuple[int, int, int]], int | None]:
    """The CPU allocator's events of a profiled step, (time, address, bytes; negative: a free), in time
    order, and when the forward pass ended (the mark)."""
    events, mark, stack = [], None, list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        fields = node.extra_fields
        if type(fields).__name__ == "_ExtraFields_Allocation":  # CPU only: the profiler runs on CPU points
            events.append((node.start_time_ns, fields.ptr, fields.alloc_size))
        elif node.name == FORWARD_MARK:
            mark = node.start_time_ns if mark is None else min(mark, node.start_time_ns)
        stack.extend(node.children)
    return sorted(events), mark


def _cpu_step(forward: Callable, zero_grad: Callable) -> dict:
    from torch.profiler import ProfilerActivity, profile, record_function

    saved = SavedBytes()
    zero_grad()  # before the profiler: freeing the last step's gradients is not part of this step

    def mark():
        with record_function(FORWARD_MARK):
            pass

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        _one_step(forward, saved, mark)
    events, forward_end = _allocations(prof)
    # Only blocks allocated during the step count, and their frees: a block a library kept from an earlier
    # step and frees now was held before the step (the profiler reports such frees when it saw the block).
    live, running, peak, kept = set(), 0, 0, None
    for start, address, nbytes in events:
        if kept is None and forward_end is not None and start > forward_end:
            kept = running
        if nbytes > 0:
            live.add(address)
        elif address in live:
            live.discard(address)
        else:
            continue
        running += nbytes
        peak = max(peak, running)
    return {"step_peak_mb": peak / MB, "kept_mb": (running if kept is None else kept) / MB, "saved": saved}


def _cuda_step(forward: Callable, zero_grad: Callable, device: torch.device) -> dict:
    saved = SavedBytes()
    zero_grad()
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    kept = {}

    def mark():
        torch.cuda.synchronize(device)
        kept["bytes"] = torch.cuda.memory_allocated(device) - before

    _one_step(forward, saved, mark)
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) - before
    return {"step_peak_mb": peak / MB, "kept_mb": kept["bytes"] / MB, "saved": saved}


def measure(forward: Callable, zero_grad: Callable, device: torch.device, repetitions: int = 3) -> dict:
    """Peak memory of `repetitions` training steps of `forward` (medians, and every sample)."""
    samples = []
    for _ in range(repetitions):
        step = _cuda_step(forward, zero_grad, device) if device.type == "cuda" else _cpu_step(forward, zero_grad)
        step["saved_tensors_mb"] = step.pop("saved").mb
        step["rest_mb"] = step["step_peak_mb"] - step["kept_mb"]
        samples.append(step)
    keys = ("step_peak_mb", "kept_mb", "saved_tensors_mb", "rest_mb")
    medians = {key: statistics.median(s[key] for s in samples) for key in keys}
    return {
        **medians,
        "step_peak_max_mb": max(s["step_peak_mb"] for s in samples),
        "source": "torch.cuda.max_memory_allocated" if device.type == "cuda" else "torch.profiler profile_memory",
        "repetitions": repetitions,
        "samples": samples,
    }
