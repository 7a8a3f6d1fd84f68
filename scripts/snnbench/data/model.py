"""The two models an snn-data point trains (snnbench.data.spec.MODELS) and their training step."""

from __future__ import annotations

import torch
from torch import nn

from snnbench.training.lif import ReferenceLIF
from snnbench.training.spec import NEURON

INPUT_GAIN = 5.0  # frames are event counts per bin (mostly 0 or 1): scale so that the LIF layers fire


class TwoLayerLIF(nn.Module):
    """Linear(700, hidden) + LIF, Linear(hidden, classes) + LIF; logits = output spike counts."""

    def __init__(self, channels: int, hidden: int, classes: int):
        super().__init__()
        self.hidden = nn.Linear(channels, hidden, bias=False)
        self.readout = nn.Linear(hidden, classes, bias=False)
        self.lif1, self.lif2 = ReferenceLIF(NEURON), ReferenceLIF(NEURON)
        self.hidden_rate = 0.0

    def forward(self, x_tbc: torch.Tensor) -> torch.Tensor:
        spikes = self.lif1(self.hidden(x_tbc * INPUT_GAIN))
        self.hidden_rate = float(spikes.detach().mean())
        return self.lif2(self.readout(spikes * INPUT_GAIN)).sum(0)


class SummedLinear(nn.Module):
    """Frames summed over time, Linear(700, classes)."""

    def __init__(self, channels: int, hidden: int, classes: int):
        super().__init__()
        self.readout = nn.Linear(channels, classes)
        self.hidden_rate = 0.0

    def forward(self, x_tbc: torch.Tensor) -> torch.Tensor:
        return self.readout(x_tbc.sum(0))


BUILDERS = {"lif": TwoLayerLIF, "linear": SummedLinear}


class Trainer:
    """One model with its Adam optimiser; step(x, y) is forward, loss, backward and update."""

    def __init__(self, name: str, hidden: int, classes: int, seed: int, device: torch.device, channels: int = 700):
        torch.manual_seed(seed)
        self.model = BUILDERS[name](channels, hidden, classes).to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.loss = nn.CrossEntropyLoss()

    def step(self, x_tbc: torch.Tensor, targets: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss(self.model(x_tbc), targets)
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())
