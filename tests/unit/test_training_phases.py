"""One training step's memory split at the forward / backward boundary (snnbench.training.memory): the running
sum of allocator events read apart before and during loss.backward(), without torch; then, in the torch
environment (skipped where it is not built), a tiny layer whose phases are known: vanilla and chunks of time
peak in the forward pass (the final stack or cat of the per-step outputs), per-layer and per-neuron
checkpointing in the backward pass (the recomputation)."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import run_in_torch
from snnbench.training import memory, memory_table
from snnbench.training.rows import STEP_MEMORY

MB = memory.MB


def events(*steps: tuple[float, str, float]) -> list[tuple[float, str, int]]:
    """(time, block, MB; negative: a free) as the profiler's (time, address, bytes)."""
    return [(t, block, int(size * MB)) for t, block, size in steps]


def test_each_phase_has_its_own_peak():
    step = events(
        (1, "current", 2),
        (2, "spikes", 1),
        (3, "stacked", 1),  # the forward pass's peak: 4 MB
        (4, "spikes", -1),
        (6, "loss", 0.5),
        (7, "stacked", -1),  # the output, released before backward
        (9, "grad", 0.25),
        (10, "earlier", -8),  # held before the step: not part of it
        (11, "current", -2),
        (12, "grad", -0.25),
    )
    split = memory.phase_peaks(step, forward_end=5, backward_start=8)
    assert split["forward_peak_mb"] == 4 and split["kept_mb"] == 3  # current and the stacked output
    assert split["backward_peak_mb"] == 2.75  # what backward started from (2.5) and the gradient
    assert split["step_peak_mb"] == 4 and split["peak_phase"] == "forward"


def test_a_recomputing_backward_pass_holds_the_peak():
    step = events((1, "input copy", 1), (2, "recomputed", 3), (3, "recomputed", -3), (4, "grad", 0.5))
    split = memory.phase_peaks(step, forward_end=1.5, backward_start=1.5)
    assert (split["forward_peak_mb"], split["kept_mb"], split["backward_peak_mb"]) == (1, 1, 4)
    assert split["step_peak_mb"] == 4 and split["peak_phase"] == "backward"


def test_a_backward_pass_without_events_holds_what_it_started_from():
    split = memory.phase_peaks(events((1, "a", 2), (2, "b", 1), (3, "b", -1)), forward_end=4, backward_start=5)
    assert split["kept_mb"] == split["backward_peak_mb"] == 2 and split["forward_peak_mb"] == 3
    tie = memory.phases(MB, MB, MB)
    assert tie["peak_phase"] == "forward"  # reached first


def test_points_table_carries_the_phases_and_the_input():
    assert {"forward_peak_mb", "backward_peak_mb", "peak_phase", "input_mb"} <= set(STEP_MEMORY)
    assert "rest_mb" not in STEP_MEMORY  # peak - kept was not the backward pass's memory


def strategy_points(**vanilla) -> pd.DataFrame:
    base = {"framework": "torch", "device": "cpu", "n": 256, "T": 100, "batch": 10, "status": "ok", "valid": True}
    rows = [
        {**base, "strategy_id": "vanilla", "step_median_s": 1.0, "step_peak_mb": 4.9, "peak_phase": "forward"},
        {
            **base,
            "strategy_id": "checkpoint-neuron",
            "step_median_s": 2.0,
            "step_peak_mb": 3.9,
            "peak_phase": "backward",
        },
    ]
    rows[0].update(kept_mb=2.9, peak_rss_mb=240.0, **vanilla)
    rows[1].update(kept_mb=2.0, peak_rss_mb=315.0)
    return pd.DataFrame(rows).assign(seed=1)


def test_strategies_table_shows_the_process_peak_beside_the_tensors():
    ratios = memory_table.ratios(strategy_points()).set_index("strategy_id")
    assert ratios.loc["checkpoint-neuron", "memory_ratio"] == pytest.approx(3.9 / 4.9)
    assert ratios.loc["checkpoint-neuron", "rss_change_mb"] == pytest.approx(75.0)  # the checkpoint's imports
    assert ratios.loc["checkpoint-neuron", "peak_phase"] == "backward"
    header = memory_table.table(strategy_points()).splitlines()[0].split()
    assert header[header.index("step_peak_mb") :][:5] == [
        "step_peak_mb",
        "peak_phase",
        "memory_ratio",
        "peak_rss_mb",
        "rss_change_mb",
    ]


def test_strategies_table_reads_points_from_before_the_split():
    old = strategy_points().drop(columns=["peak_phase"])
    ratios = memory_table.ratios(old)
    assert ratios["peak_phase"].isna().all() and ratios["forward_peak_mb"].isna().all()
    assert ratios["memory_ratio"].tolist() == pytest.approx([3.9 / 4.9, 1.0])


TORCH_PROBE = """
import json
import torch
from torch.profiler import ProfilerActivity, profile
from snnbench.training import lif, memory, models, strategies
from snnbench.training.spec import NEURON

torch.set_num_threads(1)
n, batch, steps, out = 64, 4, 200, {}
layer = models.build("torch", NEURON, n, 3.0, "unbind", 1, "cpu", torch.float32)
x = lif.make_input(steps, batch, n, 1, "cpu", torch.float32)
zero_grad = lambda: layer.zero_grad(set_to_none=True)
for strategy in ("vanilla", "checkpoint-layer", "checkpoint-neuron", "checkpoint-time"):
    forward = strategies.forward_of(layer, "torch", strategy, 25)
    m = memory.measure(lambda: forward(x), zero_grad, torch.device("cpu"), 2, inputs=x)
    # the forward pass alone, profiled apart: its running peak, summed here without phase_peaks
    zero_grad()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        spikes = forward(x)
        loss = spikes.sum()
        del spikes
    blocks, running, alone = set(), 0, 0
    for _, address, nbytes in memory._allocations(prof)[0]:
        if nbytes > 0 or address in blocks:
            blocks.symmetric_difference_update({address})
            running += nbytes
            alone = max(alone, running)
    out[strategy] = {**m, "forward_alone_mb": alone / memory.MB}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def tiny_layer():
    return run_in_torch(TORCH_PROBE)


def test_the_split_adds_up_in_every_step(tiny_layer):
    sequence = 200 * 4 * 64 * 4 / MB  # one [T, B, n] float32 tensor
    for strategy, m in tiny_layer.items():
        assert m["input_mb"] == sequence, strategy  # the input: held before the step, in no figure
        for step in m["samples"]:
            assert step["step_peak_mb"] == max(step["forward_peak_mb"], step["backward_peak_mb"]), strategy
            assert step == {**m["samples"][0], "saved_tensors_mb": step["saved_tensors_mb"]}, strategy
        # the forward pass profiled alone reaches the forward phase's peak to the byte: the boundary is right
        assert m["forward_alone_mb"] == m["forward_peak_mb"], strategy


def test_storing_peaks_forward_and_recomputing_backward(tiny_layer):
    sequence = 200 * 4 * 64 * 4 / MB
    vanilla = tiny_layer["vanilla"]
    assert vanilla["peak_phase"] == tiny_layer["checkpoint-time"]["peak_phase"] == "forward"
    # the stack of the per-step outputs: the kept graph and two more sequences at once
    assert vanilla["forward_peak_mb"] >= vanilla["kept_mb"] + 2 * sequence
    # backward starts without the output spikes and frees what the graph saved as it goes
    assert vanilla["backward_peak_mb"] < vanilla["kept_mb"] - 0.9 * sequence
    for strategy in ("checkpoint-layer", "checkpoint-neuron"):
        m = tiny_layer[strategy]
        assert m["peak_phase"] == "backward" and m["backward_peak_mb"] > m["forward_peak_mb"], strategy
        assert m["forward_peak_mb"] < vanilla["forward_peak_mb"], strategy
