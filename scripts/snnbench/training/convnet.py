"""The seed paper's convolutional SNN (snnbench.training.spec.CONV), built with each framework's neuron.

Liang et al. (DATE 2022) trained a CIFAR10-sized Conv/FC stack; this is its shape, every layer followed by
the spec's LIF neuron (NEURON) from the framework's own builder (snnbench.training.models.BUILDERS):

    [T, B, 3, 32, 32] -> conv 3x3 3 -> 32 (BN) LIF -> conv 32 -> 32 (BN) LIF -> max-pool 2
                      -> conv 32 -> 64 (BN) LIF -> max-pool 2 -> FC 4096 -> n LIF -> FC n -> 10 LIF

A `Block` is one synapse layer (pool, convolution or FC, batch norm where asked) applied to all T x B
samples at once, the input gain and the neuron: the unit each memory strategy applies to
(snnbench.training.strategies). Blocks take and give time-first sequences; a batch-first neuron
(sinabs) gets its current transposed. Each block's gain is calibrated on the reference neuron, layer
after layer, so that every layer fires `target_rate` spikes per neuron and step; every framework gets
the reference's gains (no per-framework recalibration: the conv frameworks implement the spec's neuron).
"""

from __future__ import annotations

import torch
from torch import nn

from snnbench.training import lif, models
from snnbench.training.spec import CONV, FRAMEWORKS


class TimeDistributed(nn.Module):
    """An ANN module applied to a sequence [T, B, ...] as one batch of T x B samples (batch norm's
    statistics are over all of them, as in SpikingJelly's SeqToANNContainer)."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x.flatten(0, 1)).unflatten(0, x.shape[:2])


class Block(nn.Module):
    """synapses -> gain -> neuron; `current` is what the neuron integrates, in the neuron's layout."""

    def __init__(self, synapse: nn.Module, gain: float, neuron: nn.Module, layout: str):
        super().__init__()
        self.synapse = synapse
        self.gain = lif.Gain(gain)
        self.base_gain = gain
        self.neuron = neuron
        self.layout = layout

    def current(self, x: torch.Tensor) -> torch.Tensor:
        current = self.gain(self.synapse(x))
        return current if self.layout == "TBN" else current.transpose(0, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.neuron(self.current(x))

    def time_first(self, spikes: torch.Tensor) -> torch.Tensor:
        return spikes if self.layout == "TBN" else spikes.transpose(0, 1)


class ConvNet(nn.Module):
    """The blocks in sequence; input and output time-first."""

    layout = "TBN"

    def __init__(self, blocks: list[Block]):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)

    def run(self, forwards, x: torch.Tensor, every: bool = False):
        """The output spikes with block i run by forwards[i] (a strategy's forward); every: each block's."""
        outputs = []
        for block, forward in zip(self.blocks, forwards, strict=True):
            x = block.time_first(forward(x))
            outputs.append(x)
        return outputs if every else x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(list(self.blocks), x)


def synapses(hidden: int, batch_norm: bool, channels=CONV["channels"], image=CONV["image"]) -> list[nn.Module]:
    """The five synapse layers (biases off, PyTorch's default init from the current seed)."""
    c0, height, width = image
    c1, c2, c3 = channels

    def conv(c_in: int, c_out: int, pool: bool) -> nn.Module:
        layers = [nn.MaxPool2d(2)] if pool else []
        layers.append(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False))
        if batch_norm:
            layers.append(nn.BatchNorm2d(c_out))
        return TimeDistributed(nn.Sequential(*layers))

    flat = c3 * (height // 4) * (width // 4)
    fc = nn.Sequential(nn.MaxPool2d(2), nn.Flatten(), nn.Linear(flat, hidden, bias=False))
    out = nn.Linear(hidden, CONV["classes"], bias=False)
    return [conv(c0, c1, False), conv(c1, c2, False), conv(c2, c3, True), TimeDistributed(fc), TimeDistributed(out)]


def build(framework: str, neuron: dict, architecture: str, hidden: int, gains, seed: int, device, dtype, **shape):
    """The network for `framework` with synapses from `seed`, one gain per block (spec units; None: 1),
    time_loop "unbind"; `shape` (channels, image) shrinks it for tests."""
    if framework not in models.BUILDERS:
        raise ValueError(f"no builder for framework {framework!r}")
    torch.manual_seed(seed)
    layers = synapses(hidden, architecture == "conv-bn", **shape)
    gains = gains or [1.0] * len(layers)
    blocks = []
    for synapse, gain in zip(layers, gains, strict=True):
        module, factor = models.BUILDERS[framework](neuron, 1, "unbind", device, dtype)
        block = Block(synapse, gain, module, FRAMEWORKS[framework].layout)
        block.gain.factor = gain * factor
        blocks.append(block)
    return ConvNet(blocks).to(device=device, dtype=dtype)


def make_input(steps: int, batch: int, seed: int, device, dtype, image=CONV["image"]) -> torch.Tensor:
    """x ~ N(0, 1) of CIFAR10's shape [T, B, 3, 32, 32], drawn on the CPU from `seed` (synthetic)."""
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(steps, batch, *image, generator=gen, dtype=torch.float32)
    return x.to(device=device, dtype=dtype)


@torch.no_grad()
def calibrate(reference: ConvNet, x: torch.Tensor, target_rate: float) -> tuple[list[float], list[float]]:
    """Each block's gain on the reference network (framework torch), layer after layer: the gain at which
    it fires `target_rate` given the spikes of the calibrated blocks before it. Returns (gains, rates)."""
    gains, rates = [], []
    for block in reference.blocks:
        current = block.synapse(x)
        gain, rate = lif.bisect_gain(lambda g, c=current, b=block: float(b.neuron(c * g).float().mean()), target_rate)
        block.gain.factor = block.base_gain = gain
        x = block(x)
        gains.append(gain)
        rates.append(rate)
    return gains, rates


@torch.no_grad()
def layer_rates(net: ConvNet, x: torch.Tensor) -> list[float]:
    """Spikes per neuron and step of each block on `x`."""
    return [float(s.float().mean()) for s in net.run(list(net.blocks), x, every=True)]


def trainable(net: ConvNet) -> dict[str, int]:
    return {name: p.numel() for name, p in net.named_parameters() if p.requires_grad}


def check_trainable(net: ConvNet) -> None:
    """Only the synapses (convolutions, FC layers, batch norm's affine parameters) train."""
    wrong = sorted(name for name in trainable(net) if ".synapse." not in name)
    if wrong:
        raise RuntimeError(f"trainable parameters outside the synapses: {wrong}")


def flops(steps: int, batch: int, hidden: int, channels=CONV["channels"], image=CONV["image"]) -> float:
    """FLOPs of the synapses in one forward pass (2 per multiply-add; pooling and batch norm left out)."""
    c0, height, width = image
    c1, c2, c3 = channels
    pixels = height * width
    macs = pixels * 9 * (c0 * c1 + c1 * c2) + pixels // 4 * 9 * c2 * c3
    macs += c3 * pixels // 16 * hidden + hidden * CONV["classes"]
    return 2.0 * steps * batch * macs
