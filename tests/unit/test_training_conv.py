"""The convolutional SNN of the snn-training family (snnbench.training.convnet): the grid and its skips
without torch, and in the torch environment (skipped where it is not built) the model's shapes and every
memory strategy's gradients against vanilla BPTT's on a tiny case."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import run_in_torch, validated
from snnbench import planning
from snnbench.training import family as training_family
from snnbench.training import memory_table
from snnbench.training import spec as training_spec


def conv_points(**block) -> list[dict]:
    exp = {
        "name": "conv",
        "model": "snn-training",
        "snn_training": {"frameworks": ["torch", "rockpool"], "n": [64], "T": [25], "batch": [4], **block},
    }
    return planning.expand_points(validated(exp)["experiments"][0])


def test_architecture_is_an_axis_of_the_grid_and_the_path():
    points = conv_points(architectures=["linear", "conv", "conv-bn"], strategies=["vanilla", "checkpoint-neuron"])
    assert len(points) == 2 * 3 * 2
    paths = {p["path"] for p in points}
    assert "results/conv/torch/cpu_float32_highest_unbind_checkpoint-neuron/conv-bn_n64_T25_B4/seed1" in paths
    assert len(paths) == len(points)
    assert training_family.Training().point_fields(points[0])["architecture"] == "linear"
    assert conv_points()[0]["model"]["architecture"] == "linear"  # the default: Linear + LIF


def test_libraries_that_cannot_express_the_conv_network_are_skipped_with_why():
    by = {(p["simulator"], p["model"]["architecture"]): p for p in conv_points(architectures=["linear", "conv"])}
    assert training_spec.skip_reason(by[("torch", "conv")]) is None
    assert training_spec.skip_reason(by[("rockpool", "linear")]) is None
    reason = training_spec.skip_reason(by[("rockpool", "conv")])
    assert "architecture conv: not offered: Rockpool has no convolution module" in reason
    for framework in ("torch", "snntorch", "norse", "sinabs", "spikingjelly"):
        assert training_spec.architecture_not_offered(framework, "conv-bn") is None
    index = conv_points(frameworks=["torch"], architectures=["conv"], time_loops=["index"])[0]
    assert "linear network only" in training_spec.skip_reason(index)


def test_conv_points_ask_for_the_memory_of_their_feature_maps():
    linear, conv = conv_points(frameworks=["torch"], architectures=["linear", "conv"], T=[250], batch=[10])
    # ~80 000 neurons per sample: 8 tensors of T x B x 80 000 float32 is ~6.5 GB, plus headroom
    assert training_family.estimate_mem_mb(conv) > 5 * training_family.estimate_mem_mb(linear) > 0
    assert training_family.conv_neurons() == 32 * 32 * (32 + 32) + 16 * 16 * 64 + 10


def test_memory_table_puts_the_papers_ratios_beside_the_conv_rows():
    rows = []
    for architecture in ("linear", "conv", "conv-bn"):
        base = {"framework": "torch", "architecture": architecture, "device": "cpu", "n": 64, "T": 25, "batch": 4}
        base.update(status="ok", valid=True, seed=1, peak_rss_mb=1.0, kept_mb=1.0)
        rows.append({**base, "strategy_id": "vanilla", "step_median_s": 1.0, "step_peak_mb": 100.0})
        rows.append({**base, "strategy_id": "checkpoint-neuron", "step_median_s": 1.25, "step_peak_mb": 60.0})
    ratios = memory_table.ratios(pd.DataFrame(rows)).set_index(["architecture", "strategy_id"])
    assert ratios.loc[("conv", "checkpoint-neuron"), "memory_ratio"] == pytest.approx(0.6)
    assert ratios.loc[("conv", "checkpoint-neuron"), "speedup"] == pytest.approx(0.8)
    assert ratios.loc[("conv", "checkpoint-neuron"), "paper_memory_ratio"] == 0.41
    assert ratios.loc[("conv-bn", "checkpoint-neuron"), "paper_speedup"] == 1.94
    assert pd.isna(ratios.loc[("linear", "checkpoint-neuron"), "paper_memory_ratio"])
    text = memory_table.table(pd.DataFrame(rows))
    assert "0.41x / 2.13x" in text and "0.33x / 1.94x" in text


TORCH_PROBE = """
import json
import torch
from snnbench.training import convnet, gradients
from snnbench.training.spec import CONV, NEURON

torch.set_num_threads(1)
out = {}
# The full-size network on CIFAR10's shape, T = 2, batch 1: each block's output shape and the parameters.
x = convnet.make_input(2, 1, 1, "cpu", torch.float32)
for architecture in ("conv", "conv-bn"):
    net = convnet.build("torch", NEURON, architecture, 16, None, 1, "cpu", torch.float32)
    out[architecture] = {
        "input": list(x.shape),
        "shapes": [list(s.shape) for s in net.run(list(net.blocks), x, every=True)],
        "trainable": convnet.trainable(net),
        "flops": convnet.flops(2, 1, 16),
    }
    convnet.check_trainable(net)
    # every strategy on a tiny network (4 / 4 / 8 channels, 8 x 8 images, T = 30, batch 2, chunks of 10)
    out[architecture]["gradients"] = gradients.check_all("torch", 16, 30, 10, architecture=architecture)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def torch_probe():
    return run_in_torch(TORCH_PROBE)


def test_conv_network_has_the_papers_shapes(torch_probe):
    for architecture in ("conv", "conv-bn"):
        probe = torch_probe[architecture]
        assert probe["input"] == [2, 1, 3, 32, 32]  # CIFAR10's shape, time-first
        assert probe["shapes"] == [[2, 1, 32, 32, 32], [2, 1, 32, 32, 32], [2, 1, 64, 16, 16], [2, 1, 16], [2, 1, 10]]
        weights = {name: size for name, size in probe["trainable"].items() if name.endswith("weight")}
        convs = 3 * 32 * 9 + 32 * 32 * 9 + 32 * 64 * 9
        batch_norm = 2 * 32 + 64 if architecture == "conv-bn" else 0  # its scale per channel
        assert sum(weights.values()) == convs + 64 * 8 * 8 * 16 + 16 * 10 + batch_norm
        assert probe["flops"] == 2 * 2 * (1024 * 9 * (3 * 32 + 32 * 32) + 256 * 9 * 32 * 64 + 4096 * 16 + 160)
    biases = [name for name in torch_probe["conv-bn"]["trainable"] if name.endswith("bias")]
    assert len(biases) == 3 and not any(n.endswith("bias") for n in torch_probe["conv"]["trainable"])


@pytest.mark.parametrize("architecture", ["conv", "conv-bn"])
def test_every_strategy_gives_vanillas_gradients_on_the_conv_network(torch_probe, architecture):
    report = torch_probe[architecture]["gradients"]
    for strategy in ("checkpoint-layer", "checkpoint-neuron", "checkpoint-time"):
        check = report[strategy]
        assert check["rtol"] == 1e-5 and check["passed"] and check["max_rel_diff"] <= 1e-5, (strategy, check)
        assert check["reference_max_abs"] > 0
    assert report["library"]["not_offered"].startswith("not offered: ")
    # truncating the gradient at chunk boundaries is caught in the deep network too
    assert not report["broken"]["passed"] and report["broken"]["max_rel_diff"] > 0.01
