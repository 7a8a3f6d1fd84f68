"""Timing of one network's training step, the way the 2023 comparison should have done it.

- Warm-up: whole training steps (forward + backward) until the step time stops improving
  (the latest is no more than `tolerance` faster than the best before it), at least `min_steps`
  and at most `max_steps`; whatever the first steps cost beyond a settled step (lazy
  initialisation, JIT, autotuning, kernel compilation) is reported apart as compile time.
- forward: the forward pass with autograd on (the graph is built, as in training).
- backward: loss.backward() on a graph built just before by an untimed forward pass (never a
  retained graph re-run).
- step: forward + backward in one timed region.
- Each is repeated `repetitions` times (each repetition its own graph); medians and quartiles.
- On CUDA every timed region starts and ends with torch.cuda.synchronize(), so the time covers
  the kernels, not just their launch.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch


def summary(samples: list[float]) -> dict:
    """Median, quartiles (inclusive method), IQR, extremes and the samples themselves, seconds."""
    if len(samples) < 2:
        raise ValueError("need at least two samples")
    q1, median, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return {
        "median": median,
        "q1": q1,
        "q3": q3,
        "iqr": q3 - q1,
        "min": min(samples),
        "max": max(samples),
        "mean": statistics.fmean(samples),
        "n": len(samples),
        "samples": list(samples),
    }


class Timer:
    """Wall time of a region; on CUDA synchronised before and after."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"

    def now(self) -> float:
        if self.cuda:
            torch.cuda.synchronize()
        return time.perf_counter()


def measure(
    forward: Callable[[], torch.Tensor],
    zero_grad: Callable[[], None],
    device: torch.device,
    repetitions: int,
    min_warmup: int = 2,
    max_warmup: int = 30,
    tolerance: float = 0.1,
) -> dict:
    """Time forward, backward and step of `forward` (which returns the spikes; the loss is their sum)."""
    timer = Timer(device)

    def step() -> float:
        zero_grad()
        start = timer.now()
        forward().sum().backward()
        return timer.now() - start

    warmup = []
    while len(warmup) < max_warmup:
        warmup.append(step())
        settled = len(warmup) >= max(min_warmup, 2) and warmup[-1] >= (1 - tolerance) * min(warmup[:-1])
        if settled:
            break

    forward_s, backward_s, step_s = [], [], []
    for _ in range(repetitions):
        zero_grad()
        start = timer.now()
        out = forward()
        forward_s.append(timer.now() - start)
        loss = out.sum()
        del out
        start = timer.now()
        loss.backward()
        backward_s.append(timer.now() - start)
        del loss
    for _ in range(repetitions):
        step_s.append(step())

    step_summary = summary(step_s)
    compile_s = sum(max(0.0, t - step_summary["median"]) for t in warmup)
    return {
        "forward_s": summary(forward_s),
        "backward_s": summary(backward_s),
        "step_s": step_summary,
        "warmup": {
            "steps": len(warmup),
            "settled": len(warmup) < max_warmup or warmup[-1] >= (1 - tolerance) * min(warmup[:-1]),
            "first_step_s": warmup[0],
            "compile_s": compile_s,
            "samples": warmup,
        },
    }
