"""The benchmark layer (Linear(n, n) + the spec's LIF neuron) built with each framework's public API.

`build(framework, ...)` returns a `Layer`: the shared synapses (`linear`, the only trainable
parameter), the input gain and the framework's neuron. Each builder maps the parameters of
snnbench.training.spec.NEURON onto the library's own parameterisation; the comments say how.
Libraries are imported inside their builder, so each environment needs only its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

from snnbench.training import lif
from snnbench.training.spec import FRAMEWORKS, tau_mem_steps


class Layer(nn.Module):
    """input -> Linear -> gain -> neuron -> spikes, in the framework's layout (TBN or BTN)."""

    def __init__(self, linear: nn.Linear, gain: float, neuron: nn.Module, layout: str):
        super().__init__()
        self.linear = linear
        self.gain = lif.Gain(gain)
        self.base_gain = gain  # the gain in the spec's units; self.gain also holds the framework's factor
        self.neuron = neuron
        self.layout = layout

    def current(self, x: torch.Tensor) -> torch.Tensor:
        """What the neuron integrates: the synapses' output times the gain."""
        return self.gain(self.linear(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.neuron(self.current(x))


class StepLoop(nn.Module):
    """Our loop over time steps around a per-step neuron `cell(i_t, state) -> (spikes, state)`,
    taking step t as x.unbind(0) or as x[t] (see ReferenceLIF)."""

    def __init__(self, cell: Callable, time_loop: str):
        super().__init__()
        self.cell = cell
        self.time_loop = time_loop

    def forward(self, current: torch.Tensor) -> torch.Tensor:
        return self.run(current)[0]

    def run(self, current: torch.Tensor, state=None) -> tuple[torch.Tensor, object]:
        """Spikes of the sequence and the state after its last step, starting from `state` (None: rest)."""
        if self.time_loop == "unbind":
            steps = current.unbind(0)
        else:
            steps = (current[t] for t in range(current.shape[0]))
        spikes = []
        for i_t in steps:
            s, state = self.cell(i_t, state)
            spikes.append(s)
        return torch.stack(spikes), state


class FromRest(nn.Module):
    """Libraries that keep the membrane in the module between calls (sinabs, SpikingJelly,
    rockpool): reset it so that every sequence starts from rest, as the spec says."""

    def __init__(self, module: nn.Module, reset: Callable[[], object]):
        super().__init__()
        self.module = module
        self.reset = reset

    def forward(self, current: torch.Tensor) -> torch.Tensor:
        self.reset()
        return self.module(current)


class FirstOutput(nn.Module):
    """The spikes of a module that returns (spikes, state)."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module

    def forward(self, current: torch.Tensor) -> torch.Tensor:
        out = self.module(current)
        return out[0] if isinstance(out, tuple) else out


def _freeze(module: nn.Module) -> nn.Module:
    """The spec trains only the synapses: the neuron's own parameters (time constants,
    thresholds) are fixed."""
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def _torch(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    return lif.ReferenceLIF(neuron, time_loop), 1.0


def _snntorch(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    import snntorch
    from snntorch import surrogate

    # Leaky integrates v = beta u + I: the spec's (1 - beta) input factor goes into the gain.
    # reset_mechanism "zero" resets u = v (1 - s) with the reset detached; spikes where v > theta.
    leaky = snntorch.Leaky(
        beta=neuron["beta"],
        threshold=neuron["threshold"],
        spike_grad=surrogate.atan(alpha=neuron["surrogate_alpha"]),
        reset_mechanism="zero",
    ).to(device=device, dtype=dtype)

    def cell(i_t, mem):
        if mem is None:
            mem = torch.zeros_like(i_t)
        return leaky(i_t, mem)

    loop = StepLoop(cell, time_loop)
    loop.leaky = _freeze(leaky)
    return loop, 1.0 - neuron["beta"]


def _norse(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from norse.torch import LIFBoxCell, LIFBoxParameters, Lift

    # Euler step v + dt tau_mem_inv (v_leak - v + i) = beta v + (1 - beta) i with
    # dt tau_mem_inv = 1 - beta; reset to v_reset = 0. Norse has no arctangent surrogate:
    # SuperSpike (dS/dv = 1 / (|v - theta| + 1)^2, same peak) is the closest it offers.
    dt = 1e-3
    params = LIFBoxParameters(
        tau_mem_inv=torch.as_tensor((1 - neuron["beta"]) / dt, device=device, dtype=dtype),
        v_leak=torch.as_tensor(0.0, device=device, dtype=dtype),
        v_th=torch.as_tensor(neuron["threshold"], device=device, dtype=dtype),
        v_reset=torch.as_tensor(0.0, device=device, dtype=dtype),
        method="super",
    )
    return _freeze(FirstOutput(Lift(LIFBoxCell(params, dt=dt)))), 1.0


def _sinabs_layer(lif_class, neuron: dict, device, dtype) -> tuple[nn.Module, float]:
    """A sinabs-style LIF layer (sinabs.layers.LIF or its EXODUS twin, same parameters).

    With norm_input, v = alpha v + (1 - alpha) x with alpha = exp(-1 / tau_mem): tau_mem from
    beta. SingleSpike: at most one spike per step; MembraneReset: reset to zero. The surrogate
    is a gradient function of (v, threshold): the spec's arctangent."""
    from sinabs.activation import MembraneReset, SingleSpike

    alpha = neuron["surrogate_alpha"]
    layer = lif_class(
        tau_mem=tau_mem_steps(neuron["beta"]),
        spike_threshold=neuron["threshold"],
        spike_fn=SingleSpike,
        reset_fn=MembraneReset(),
        surrogate_grad_fn=lambda v, threshold: lif.atan_surrogate(v, threshold, alpha),
        norm_input=True,
    ).to(device=device, dtype=dtype)
    return _freeze(FromRest(layer, layer.reset_states)), 1.0


def _sinabs(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from sinabs.layers import LIF

    return _sinabs_layer(LIF, neuron, device, dtype)


def _spikingjelly(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from spikingjelly.activation_based import neuron as sj_neuron
    from spikingjelly.activation_based import surrogate

    # decay_input: H = V + (X - V) / tau = (1 - 1/tau) V + X / tau, so tau = 1 / (1 - beta);
    # v_reset = 0: hard reset to zero; detach_reset as in the spec. Multi-step mode: the
    # library runs the loop over the [T, B, n] sequence.
    node = sj_neuron.LIFNode(
        tau=1.0 / (1.0 - neuron["beta"]),
        decay_input=True,
        v_threshold=neuron["threshold"],
        v_reset=0.0,
        surrogate_function=surrogate.ATan(alpha=neuron["surrogate_alpha"]),
        detach_reset=True,
        step_mode="m",
    ).to(device=device, dtype=dtype)
    return _freeze(FromRest(node, node.reset)), 1.0


class RockpoolATanSpikes(torch.autograd.Function):
    """A spike generator for rockpool's `spike_generation_fn` hook: rockpool's own spike count
    (floor(v / theta) where v >= theta, at most max_spikes_per_dt) with the spec's arctangent
    surrogate gradient instead of rockpool's piecewise-linear one."""

    ALPHA = 2.0

    @staticmethod
    def forward(ctx, v, threshold, window, max_spikes_per_dt):
        ctx.save_for_backward(v, threshold)
        count = (v >= threshold) * torch.floor(v / threshold)
        return torch.minimum(count, max_spikes_per_dt.to(v.dtype)).to(v.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        v, threshold = ctx.saved_tensors
        return grad_output * lif.atan_surrogate(v, threshold, RockpoolATanSpikes.ALPHA), None, None, None


def _rockpool(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from rockpool.nn.modules import LIFNeuronTorch

    # LIFNeuronTorch: v = alpha v + x with alpha = exp(-dt / tau_mem) (no synaptic state, unlike
    # LIFTorch), so tau_mem = -dt / ln(beta) and the (1 - beta) input factor goes into the gain.
    # max_spikes_per_dt = 1: single spikes. Rockpool resets by subtracting theta (no option for
    # a reset to zero): the one difference in dynamics, recorded by the equivalence test.
    dt = 1e-3
    RockpoolATanSpikes.ALPHA = neuron["surrogate_alpha"]
    module = LIFNeuronTorch(
        shape=(n,),
        tau_mem=-dt / math.log(neuron["beta"]),
        threshold=neuron["threshold"],
        dt=dt,
        spike_generation_fn=RockpoolATanSpikes,
        max_spikes_per_dt=1,
    ).to(device=device, dtype=dtype)
    return _freeze(FromRest(FirstOutput(module), module.reset_state)), 1.0 - neuron["beta"]


def _sinabs_exodus(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from sinabs.exodus.layers import LIF

    # The same parameterisation as sinabs.layers.LIF, computed by EXODUS's CUDA kernels over the
    # whole sequence. Not run on this project's CPU machines (written against sinabs-exodus'
    # documented API; check the equivalence test's output on a GPU).
    return _sinabs_layer(LIF, neuron, device, dtype)


def _rockpool_exodus(neuron: dict, n: int, time_loop: str, device, dtype) -> tuple[nn.Module, float]:
    from rockpool.nn.modules import LIFExodus

    # LIFExodus always has a synaptic current; tau_syn = dt / 10 decays it to exp(-10) in one step,
    # so the input acts within the step (the gain calibration absorbs the synaptic scale). Not run on
    # this project's CPU machines.
    dt = 1e-3
    module = LIFExodus(
        shape=(n,), tau_mem=-dt / math.log(neuron["beta"]), tau_syn=dt / 10, threshold=neuron["threshold"], dt=dt
    ).to(device)
    return _freeze(FromRest(FirstOutput(module), module.reset_state)), 1.0 - neuron["beta"]


BUILDERS = {
    "torch": _torch,
    "snntorch": _snntorch,
    "norse": _norse,
    "sinabs": _sinabs,
    "spikingjelly": _spikingjelly,
    "rockpool": _rockpool,
    "sinabs-exodus": _sinabs_exodus,
    "rockpool-exodus": _rockpool_exodus,
}


def build(framework: str, neuron: dict, n: int, gain: float, time_loop: str, seed: int, device, dtype) -> Layer:
    """The layer for `framework` with synapses from `seed` and the calibrated input `gain`."""
    if framework not in BUILDERS:
        raise ValueError(f"no builder for framework {framework!r}")
    module, factor = BUILDERS[framework](neuron, n, time_loop, device, dtype)
    layer = Layer(lif.linear(n, seed, device, dtype), gain, module, FRAMEWORKS[framework].layout)
    layer.gain.factor = gain * factor
    return layer.to(device=device)


@torch.no_grad()
def calibrate(
    layer: Layer, x: torch.Tensor, target_rate: float, reference_rate: float, max_batch: int = 2
) -> tuple[float, float]:
    """Set the layer's input gain so that it fires `target_rate` spikes per neuron and step on the
    first `max_batch` batch elements of `x` (in the layer's layout): the framework's own neuron decides,
    so frameworks whose neuron differs from the spec still fire at the same rate. A framework
    that fires the reference's rate at the reference's gain (it implements the spec) keeps it.
    Returns (gain, rate) with the gain in the spec's units (before the framework's factor)."""
    factor = layer.gain.factor / layer.base_gain
    head = x[:, :max_batch] if layer.layout == "TBN" else x[:max_batch]

    def rate(g: float) -> float:
        layer.gain.factor = g * factor
        return float(layer(head).float().mean())

    g0 = layer.base_gain
    at_reference = rate(g0)
    if abs(at_reference - reference_rate) <= 0.005 * reference_rate:
        layer.gain.factor = g0 * factor
        return g0, at_reference
    try:
        gain, achieved = lif.bisect_gain(rate, target_rate, lo=g0 / 4, hi=g0 * 4, iterations=12)
    except RuntimeError:  # far from the reference: search the whole range
        gain, achieved = lif.bisect_gain(rate, target_rate, lo=g0 / 1e3, hi=g0 * 1e3, iterations=24)
    layer.gain.factor = gain * factor
    layer.base_gain = gain
    return gain, achieved


def trainable(layer: Layer) -> dict[str, int]:
    """Trainable parameters by name (the spec allows linear.weight only)."""
    return {name: p.numel() for name, p in layer.named_parameters() if p.requires_grad}


def check_trainable(layer: Layer, neuron: dict) -> None:
    names = sorted(trainable(layer))
    if names != sorted(neuron["trainable"]):
        raise RuntimeError(f"trainable parameters {names}, the spec trains {neuron['trainable']}")
