"""Gradient equality: a memory strategy recomputes what vanilla BPTT stores, so its weight gradients
must be vanilla's (Liang et al.: "no approximation"). Checked per point on a small case of the
point's own layer; a point whose gradients differ is invalid.

`python -m snnbench.training.gradients FRAMEWORK [N T CHUNK] [ARCHITECTURE]` (in the framework's
environment) prints the check of every strategy on a small network, and of a deliberately wrong one
(truncated BPTT across chunks), as JSON.
"""

from __future__ import annotations

import json
import sys

import torch

from snnbench.training import convnet, lif, models, strategies
from snnbench.training.spec import NEURON, STRATEGIES

RTOL = 1e-5  # float32; relative to the largest vanilla gradient (elementwise |g - g0| <= RTOL max|g0|)
CHECK_STEPS = 60  # time steps of the small case (at least three chunks of the chunk lengths used)
CHECK_BATCH = 2


def weight_gradient(forward, layer, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """The gradient of every trainable parameter (the synapses) after one step of `forward`."""
    layer.zero_grad(set_to_none=True)
    forward(x).sum().backward()
    return {name: p.grad.detach().clone() for name, p in layer.named_parameters() if p.requires_grad}


def compare_one(reference: torch.Tensor, other: torch.Tensor, rtol: float = RTOL) -> dict:
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


def compare(reference: dict, other: dict, rtol: float = RTOL) -> dict:
    """Each parameter's gradient against vanilla's, relative to its own largest entry; the worst parameter's
    figures, passed only when every parameter passes."""
    results = {name: compare_one(reference[name], other[name], rtol) for name in reference}
    worst = max(results, key=lambda name: (not results[name]["passed"], results[name]["max_rel_diff"]))
    out = {**results[worst], "passed": all(r["passed"] for r in results.values())}
    if len(results) > 1:
        out["parameter"] = worst
    return out


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


def small_network(framework: str, architecture: str, n: int, steps: int, seed: int):
    """A small float32 network and its input: Linear(n, n) + LIF, or the conv stack with n hidden units,
    4 / 4 / 8 channels and 8 x 8 images; gains calibrated on the reference."""
    torch.manual_seed(seed)
    if architecture != "linear":
        shape = {"channels": (4, 4, 8), "image": (3, 8, 8)}
        x = convnet.make_input(steps, CHECK_BATCH, seed, "cpu", torch.float32, image=shape["image"])
        reference = convnet.build("torch", NEURON, architecture, n, None, seed, "cpu", torch.float32, **shape)
        gains, _ = convnet.calibrate(reference, x, NEURON["target_rate"])
        return convnet.build(framework, NEURON, architecture, n, gains, seed, "cpu", torch.float32, **shape), x
    x_tbn = lif.make_input(steps, CHECK_BATCH, n, seed, "cpu", torch.float32)
    weight = lif.linear(n, seed, "cpu", torch.float32).weight.detach()
    gain, _ = lif.calibrate_gain(NEURON, weight, x_tbn, NEURON["target_rate"])
    layer = models.build(framework, NEURON, n, gain, "unbind", seed, "cpu", torch.float32)
    return layer, (x_tbn if layer.layout == "TBN" else x_tbn.transpose(0, 1).contiguous())


def check_all(
    framework: str, n: int = 64, steps: int = 120, chunk: int = 20, seed: int = 1, architecture: str = "linear"
) -> dict:
    """Every strategy's check on a small float32 network, and the broken strategy's."""
    layer, x = small_network(framework, architecture, n, steps, seed)
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
    architecture = numbers.pop() if numbers and not numbers[-1].isdigit() else "linear"
    print(json.dumps(check_all(framework, *map(int, numbers), architecture=architecture), indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
