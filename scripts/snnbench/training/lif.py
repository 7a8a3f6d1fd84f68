"""The plain-PyTorch reference of the benchmark neuron (snnbench.training.spec.NEURON), and the
pieces every framework's network shares: the layer around the neuron and the input gain
calibration. Runs in every framework environment (it needs torch only).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn


class ATanSpike(torch.autograd.Function):
    """Heaviside H(v - theta) (spike where v > theta) with the arctangent surrogate gradient
    dS/dv = (alpha/2) / (1 + (pi/2 alpha (v - theta))^2)."""

    @staticmethod
    def forward(ctx, shifted: torch.Tensor, alpha: float) -> torch.Tensor:
        ctx.save_for_backward(shifted)
        ctx.alpha = alpha
        return (shifted > 0).to(shifted.dtype)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        (shifted,) = ctx.saved_tensors
        alpha = ctx.alpha
        return grad_output * (alpha / 2) / (1 + (math.pi / 2 * alpha * shifted) ** 2), None


def atan_surrogate(v: torch.Tensor, threshold: float, alpha: float) -> torch.Tensor:
    """Surrogate gradient of H at v (for libraries that take a gradient function)."""
    return (alpha / 2) / (1 + (math.pi / 2 * alpha * (v - threshold)) ** 2)


class ReferenceLIF(nn.Module):
    """NEURON over a sequence [T, B, n] of input currents (already multiplied by the gain).

    `time_loop` says how the loop takes step t: "unbind" (x.unbind(0): one backward node for the
    whole sequence) or "index" (x[t]: a backward node per step, each writing a full-size
    gradient, so backward grows with T^2). `reset` and `beta` exist so tests can build a
    deliberately different neuron; the benchmark uses the spec's values.
    """

    def __init__(self, neuron: dict, time_loop: str = "unbind", reset: str | None = None):
        super().__init__()
        self.beta = float(neuron["beta"])
        self.threshold = float(neuron["threshold"])
        self.alpha = float(neuron["surrogate_alpha"])
        self.reset = reset or neuron["reset"]
        if time_loop not in ("unbind", "index"):
            raise ValueError(f"time_loop must be unbind or index, not {time_loop!r}")
        self.time_loop = time_loop

    def forward(self, current: torch.Tensor) -> torch.Tensor:
        return self.run(current)[0]

    def run(self, current: torch.Tensor, u: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Spikes of the sequence and the membrane after its last step, starting from `u` (None: rest)."""
        steps = current.unbind(0) if self.time_loop == "unbind" else (current[t] for t in range(current.shape[0]))
        spikes = []
        for i_t in steps:
            v = (1 - self.beta) * i_t if u is None else self.beta * u + (1 - self.beta) * i_t
            s = ATanSpike.apply(v - self.threshold, self.alpha)
            if self.reset == "zero":
                u = v * (1 - s.detach())
            elif self.reset == "subtract":
                u = v - self.threshold * s.detach()
            else:
                raise ValueError(f"unknown reset {self.reset!r}")
            spikes.append(s)
        return torch.stack(spikes), u


class Gain(nn.Module):
    """Multiplies by a fixed factor (the calibrated input gain, times any constant a library's
    parameterisation needs)."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = float(factor)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factor


def linear(n: int, seed: int, device, dtype) -> nn.Linear:
    """The layer's synapses: Linear(n, n, bias=False) with PyTorch's default init from `seed`."""
    torch.manual_seed(seed)
    layer = nn.Linear(n, n, bias=False)
    return layer.to(device=device, dtype=dtype)


def make_input(steps: int, batch: int, n: int, seed: int, device, dtype, layout: str = "TBN") -> torch.Tensor:
    """The input x ~ N(0, 1), drawn time-first from `seed` on the CPU (the same numbers on every
    device), then laid out as the framework wants it."""
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(steps, batch, n, generator=gen, dtype=torch.float32)
    if layout == "BTN":
        x = x.transpose(0, 1).contiguous()
    return x.to(device=device, dtype=dtype)


def bisect_gain(
    rate: Callable[[float], float], target_rate: float, lo: float = 1e-3, hi: float = 1e3, iterations: int = 24
) -> tuple[float, float]:
    """The gain g with rate(g) = target (bisection on log g in [lo, hi]; the spike rate grows
    monotonically with the input gain). Returns (g, rate(g))."""
    if rate(hi) < target_rate:
        raise RuntimeError(f"no input gain up to {hi:g} reaches a spike rate of {target_rate}")
    for _ in range(iterations):
        mid = math.sqrt(lo * hi)
        if rate(mid) < target_rate:
            lo = mid
        else:
            hi = mid
    return hi, rate(hi)


@torch.no_grad()
def calibrate_gain(neuron: dict, weight: torch.Tensor, x_tbn: torch.Tensor, target_rate: float) -> tuple[float, float]:
    """The input gain at which the reference fires `target_rate` spikes per neuron and step on this input."""
    lif = ReferenceLIF(neuron)
    current = torch.nn.functional.linear(x_tbn, weight)
    return bisect_gain(lambda g: float(lif(current * g).float().mean()), target_rate)
