"""Peak memory of one training step, where it is reached, and what the forward pass keeps for the backward pass.

What is measured, per step: the forward pass, the loss (sum of the spikes) and the output released, then
loss.backward(); the gradients are set to None before the step, and freeing them is not part of it. Every figure
is tensor memory held beyond what was held before the step: the interpreter, the libraries, the weights and the
input tensor (`input_mb`, allocated before the step and held through it) are in none of them.

- `forward_peak_mb`: the most held at once before loss.backward() (the forward pass; the loss is a scalar).
- `backward_peak_mb`: the most held at once during loss.backward(): it starts from `kept_mb` less what only the
  output held (the loss keeps no reference to the spikes), frees what the graph saved as it goes, and adds its
  working memory, a checkpoint's recomputation and the gradients.
- `step_peak_mb` = the larger of the two, and `peak_phase` says which (forward on a tie: reached first).
- `kept_mb`: what is still held at the end of the forward pass (the graph: what autograd saved for the backward
  pass, the output spikes and a checkpoint's inputs).
- `saved_tensors_mb`: the bytes autograd saved for the backward pass as seen by
  torch.autograd.graph.saved_tensors_hooks (distinct storages, the input and weights included). Tensors saved
  inside a torch.utils.checkpoint region are packed by the checkpoint's own hooks and not seen here: under a
  checkpoint strategy this is what is saved outside the checkpointed regions.

How: on CUDA the caching allocator's max_memory_allocated, its peak statistics reset at the step's start and
again when loss.backward() starts, less the memory allocated before the step. On CPU there is no allocator
peak counter: torch's profiler (profile_memory=True) reports every allocation and free of the CPU allocator with
its size; their running sum in time order, from the step's start, is read at profiler marks set at the end of
the forward pass and at the start of loss.backward() (phase_peaks). The process's peak RSS (`peak_rss_mb`,
measured beside) is what none of these counts plus at most the step's peak, plus what malloc keeps mapped after
a free.

The profiler adds its own cost, so memory is measured on steps apart from the timed ones.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where a step runs: the split (phase_peaks) is read without it
    import torch

MB = 2**20
FORWARD_MARK = "snnbench_forward_end"
BACKWARD_MARK = "snnbench_backward_start"
KEYS = ("step_peak_mb", "forward_peak_mb", "backward_peak_mb", "kept_mb", "saved_tensors_mb")


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
        from torch.autograd.graph import saved_tensors_hooks

        return saved_tensors_hooks(self.pack, self.unpack)

    @property
    def mb(self) -> float:
        return sum(self.storages.values()) / MB


def phases(forward_peak: int, kept: int, backward_peak: int) -> dict:
    """The step's figures in MB from its phases' peaks in bytes (each from the step's start)."""
    return {
        "step_peak_mb": max(forward_peak, backward_peak) / MB,
        "forward_peak_mb": forward_peak / MB,
        "backward_peak_mb": backward_peak / MB,
        "peak_phase": "forward" if forward_peak >= backward_peak else "backward",
        "kept_mb": kept / MB,
    }


def phase_peaks(events: Iterable[tuple[int, int, int]], forward_end: int, backward_start: int) -> dict:
    """The running sum of a step's allocator events, (time, address, bytes; negative: a free) in time order:
    what it is at `forward_end` (kept), its peak up to `backward_start` and after it (`phases`)."""
    # Only blocks allocated during the step count, and their frees: a block a library kept from an earlier
    # step and frees now was held before the step (the profiler reports such frees when it saw the block).
    live, running, kept, peak = set(), 0, None, {"forward": 0, "backward": None}
    for start, address, nbytes in events:
        if kept is None and start > forward_end:
            kept = running
        if peak["backward"] is None and start > backward_start:
            peak["backward"] = running  # what loss.backward() starts from, held before its first event
        if nbytes > 0:
            live.add(address)
        elif address in live:
            live.discard(address)
        else:
            continue
        running += nbytes
        phase = "forward" if peak["backward"] is None else "backward"
        peak[phase] = max(peak[phase], running)
    kept = running if kept is None else kept
    return phases(peak["forward"], kept, running if peak["backward"] is None else peak["backward"])


def _one_step(forward: Callable, saved: SavedBytes, mark: Callable) -> None:
    with saved.hooks():
        out = forward()
    mark(FORWARD_MARK)
    loss = out.sum()
    del out
    mark(BACKWARD_MARK)
    loss.backward()
    del loss


def _allocations(prof) -> tuple[list[tuple[int, int, int]], dict[str, int]]:
    """The CPU allocator's events of a profiled step, (time, address, bytes; negative: a free), in time
    order, and when each mark was set."""
    events, marks, stack = [], {}, list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        fields = node.extra_fields
        if type(fields).__name__ == "_ExtraFields_Allocation":  # CPU only: the profiler runs on CPU points
            events.append((node.start_time_ns, fields.ptr, fields.alloc_size))
        elif node.name in (FORWARD_MARK, BACKWARD_MARK):
            marks[node.name] = min(marks.get(node.name, node.start_time_ns), node.start_time_ns)
        stack.extend(node.children)
    return sorted(events), marks


def _cpu_step(forward: Callable, zero_grad: Callable) -> dict:
    from torch.profiler import ProfilerActivity, profile, record_function

    saved = SavedBytes()
    zero_grad()  # before the profiler: freeing the last step's gradients is not part of this step

    def mark(name: str):
        with record_function(name):
            pass

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        _one_step(forward, saved, mark)
    events, marks = _allocations(prof)
    missing = {FORWARD_MARK, BACKWARD_MARK} - set(marks)
    if missing:  # without them no figure could say which phase it belongs to
        raise RuntimeError(f"the profiler recorded no {', '.join(sorted(missing))}: the step cannot be split")
    return {**phase_peaks(events, marks[FORWARD_MARK], marks[BACKWARD_MARK]), "saved": saved}


def _cuda_step(forward: Callable, zero_grad: Callable, device: torch.device) -> dict:
    import torch

    saved = SavedBytes()
    zero_grad()
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    read = {}

    def mark(name: str):
        torch.cuda.synchronize(device)
        if name == FORWARD_MARK:
            read["kept"] = torch.cuda.memory_allocated(device) - before
            return
        read["forward"] = torch.cuda.max_memory_allocated(device) - before
        torch.cuda.reset_peak_memory_stats(device)  # from here the peak is loss.backward()'s

    _one_step(forward, saved, mark)
    torch.cuda.synchronize(device)
    backward_peak = torch.cuda.max_memory_allocated(device) - before
    return {**phases(read["forward"], read["kept"], backward_peak), "saved": saved}


def measure(
    forward: Callable,
    zero_grad: Callable,
    device: torch.device,
    repetitions: int = 3,
    inputs: torch.Tensor | None = None,
) -> dict:
    """Peak memory of `repetitions` training steps of `forward` (medians, and every sample); `inputs`, the
    tensor `forward` reads, is reported as `input_mb` (held before the step, in none of its figures)."""
    samples = []
    for _ in range(repetitions):
        step = _cuda_step(forward, zero_grad, device) if device.type == "cuda" else _cpu_step(forward, zero_grad)
        step["saved_tensors_mb"] = step.pop("saved").mb
        samples.append(step)
    medians = {key: statistics.median(s[key] for s in samples) for key in KEYS}
    return {
        **medians,
        # the medians' phase: the step is deterministic to the byte, so every sample's is the same
        "peak_phase": "forward" if medians["forward_peak_mb"] >= medians["backward_peak_mb"] else "backward",
        "input_mb": None if inputs is None else inputs.untyped_storage().nbytes() / MB,
        "step_peak_max_mb": max(s["step_peak_mb"] for s in samples),
        "source": "torch.cuda.max_memory_allocated" if device.type == "cuda" else "torch.profiler profile_memory",
        "repetitions": repetitions,
        "samples": samples,
    }
