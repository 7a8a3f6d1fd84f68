"""Gradient equality: a memory strategy recomputes what vanilla BPTT stores, so its weight gradients
must be vanilla's (Liang et al.: "no approximation"). Checked per point on a small case of the
point's own layer; a point whose gradients differ is invalid.

`python -m snnbench.training.gradients FRAMEWORK [N T CHUNK]` (in the framework's environment)
prints the check of every strategy on a small layer, and of a deliberately wrong one
(truncated BPTT across chunks), as JSON.
"""

from __future__ import annotations

import json
import sys

import torch

from snnbench.training import lif, models, strategies
from snnbench.training.spec import NEURON, STRATEGIES

RTOL = 1e-5  # float32; relative to the largest vanilla gradient (elementwise |g - g0| <= RTOL max|g0|)
CHECK_STEPS = 60  # time steps of the small case (at least three chunks of the chunk lengths used)
CHECK_BATCH = 2


def weight_gradient(forward, layer, x: torch.Tensor) -> torch.Tensor:
    layer.zero_grad(set_to_none=True)
    forward(x).sum().backward()
    return layer.linear.weight.grad.detach().clone()


def compare(reference: torch.Tensor, other: torch.Tensor, rtol: float = RTOL) -> dict:
    scale = float(reference.abs().max())
    max_diff = float((other - reference).abs().max())
    relative = max_diff / scale if scale > 0 else (0.0 if max_diff == 0 else float("inf"))
    return {
        "rtol": rtol,
        "max_abs_diff": max_diff,
        "max_rel_diff": relative,
        "reference_max_abs": scale,
        "passed": scale > 0 and relative <= rtol,
    }


def small_case(layer, x: torch.Tensor, chunk: int | None) -> torch.Tensor:
    """The first batch elements and time steps of the point's input (enough for three chunks)."""
    steps = max(CHECK_STEPS, 3 * (chunk or 1))
    return x[:steps, :CHECK_BATCH] if layer.layout == "TBN" else x[:CHECK_BATCH, :steps]


def check(layer, framework: str, strategy: str, chunk: int | None, x: torch.Tensor) -> dict:
    """Vanilla's weight gradient against the strategy's on a small case of `x` (float32 or the point's dtype)."""
    small = small_case(layer, x, chunk)
    reference = weight_gradient(layer, layer, small)
    gradient = weight_gradient(strategies.forward_of(layer, framework, strategy, chunk), layer, small)
    layer.zero_grad(set_to_none=True)
    return {"steps": small.shape[0 if layer.layout == "TBN" else 1], **compare(reference, gradient)}


def check_all(framework: str, n: int = 64, steps: int = 120, chunk: int = 20, seed: int = 1) -> dict:
    """Every strategy's check on a small float32 layer, and the broken strategy's."""
    torch.manual_seed(seed)
    x_tbn = lif.make_input(steps, CHECK_BATCH, n, seed, "cpu", torch.float32)
    weight = lif.linear(n, seed, "cpu", torch.float32).weight.detach()
    gain, _ = lif.calibrate_gain(NEURON, weight, x_tbn, NEURON["target_rate"])
    layer = models.build(framework, NEURON, n, gain, "unbind", seed, "cpu", torch.float32)
    x = x_tbn if layer.layout == "TBN" else x_tbn.transpose(0, 1).contiguous()
    report = {}
    for strategy in STRATEGIES[1:]:
        reason = strategies.not_offered(framework, strategy)
        report[strategy] = {"not_offered": reason} if reason else check(layer, framework, strategy, chunk, x)
    if strategies.not_offered(framework, "checkpoint-time") is None:
        reference = weight_gradient(layer, layer, x)
        broken = strategies.broken_forward(layer, framework, chunk)
        report["broken"] = compare(reference, weight_gradient(broken, layer, x))
    return report


def main(argv: list[str]) -> None:
    framework, *numbers = argv
    print(json.dumps(check_all(framework, *map(int, numbers)), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
