"""Training's memory wall for real: memory strategies give vanilla BPTT's gradients in every library, the
step's memory measurement sees what the forward pass keeps, and NeuroBench's metrics (the real `neurobench`
package, in envs/neurobench.yaml's environment) agree with a count done by hand.

Needs the environments of `make training-envs` (`make test` builds them).
"""

from __future__ import annotations

import json
import subprocess
import textwrap

import pytest
from conftest import REPO
from snnbench import environments

pytestmark = pytest.mark.slow

CPU_FRAMEWORKS = ["torch", "snntorch", "norse", "sinabs", "spikingjelly", "rockpool"]
MB = 2**20


def run_python(env: str, code: str, *args: str) -> dict:
    """Run `code` in environment `env` and return the JSON it prints last."""
    proc = subprocess.run(
        [environments.python(env), "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=600,
        # this checkout's snnbench, whichever checkout the environment's editable install names
        env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "scripts")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def gradient_reports():
    """snnbench.training.gradients in each library's environment: every strategy on a small float32 layer."""
    code = "import json, sys; from snnbench.training import gradients as g; print(json.dumps(g.check_all(sys.argv[1])))"
    return {fw: run_python(fw, code, fw) for fw in CPU_FRAMEWORKS}


def test_every_offered_strategy_gives_vanillas_gradients(gradient_reports):
    checked = 0
    for framework, report in gradient_reports.items():
        for strategy in ("checkpoint-layer", "checkpoint-neuron", "checkpoint-time", "library"):
            result = report[strategy]
            if "not_offered" in result:
                continue
            assert result["rtol"] == 1e-5
            assert result["passed"] and result["max_rel_diff"] <= 1e-5, (framework, strategy, result)
            assert result["reference_max_abs"] > 0  # a gradient that is all zeros would prove nothing
            checked += 1
    # per-layer and per-neuron checkpointing everywhere, chunks of time where the membrane can be carried,
    # SpikingJelly's memopt
    assert checked == 2 * 6 + 5 + 1


def test_gradient_check_rejects_truncated_backpropagation(gradient_reports):
    for framework, report in gradient_reports.items():
        if "broken" in report:
            assert not report["broken"]["passed"] and report["broken"]["max_rel_diff"] > 0.01, framework
    assert set(gradient_reports) - {fw for fw, r in gradient_reports.items() if "broken" in r} == {"rockpool"}


def test_strategies_a_library_does_not_offer_say_why(gradient_reports):
    assert "not_offered" not in gradient_reports["spikingjelly"]["library"]  # its memopt runs on CPU
    for framework in ("torch", "snntorch", "norse", "sinabs", "rockpool"):
        assert gradient_reports[framework]["library"]["not_offered"].startswith("not offered: ")
    assert "CUDA" in gradient_reports["sinabs"]["library"]["not_offered"]
    assert "vmem[0].detach()" in gradient_reports["rockpool"]["checkpoint-time"]["not_offered"]


CONV_FRAMEWORKS = ["torch", "snntorch", "norse", "sinabs", "spikingjelly"]  # rockpool cannot express it


def test_every_offered_strategy_gives_vanillas_gradients_on_the_conv_network():
    """The convolutional network (4 / 4 / 8 channels, 8 x 8 images, T = 30, chunks of 10), with and without
    batch norm, in each library that expresses it: every parameter's gradient equal to vanilla's."""
    code = (
        "import json, sys; from snnbench.training import gradients as g; "
        "print(json.dumps({a: g.check_all(sys.argv[1], 16, 30, 10, architecture=a) for a in ('conv', 'conv-bn')}))"
    )
    checked = 0
    for framework in CONV_FRAMEWORKS:
        for architecture, report in run_python(framework, code, framework).items():
            for strategy in ("checkpoint-layer", "checkpoint-neuron", "checkpoint-time", "library"):
                result = report[strategy]
                if "not_offered" in result:
                    continue
                assert result["passed"] and result["max_rel_diff"] <= 1e-5, (framework, architecture, strategy)
                assert result["reference_max_abs"] > 0
                checked += 1
            assert not report["broken"]["passed"], (framework, architecture)
    assert checked == 2 * (3 * 5 + 1)  # both networks: three checkpointings everywhere, SpikingJelly's memopt


MEMORY_PROBE = """
import json, sys
import torch
from snnbench.training import lif, memory, models, strategies
from snnbench.training.spec import NEURON

torch.set_num_threads(1)
n, batch, out, framework = 64, 4, {}, sys.argv[1]
layer = models.build(framework, NEURON, n, 3.0, "unbind", 1, "cpu", torch.float32)
for steps in (50, 200):
    x = lif.make_input(steps, batch, n, 1, "cpu", torch.float32)
    for strategy in ("vanilla", "checkpoint-layer", "checkpoint-neuron", "checkpoint-time"):
        forward = strategies.forward_of(layer, framework, strategy, 10)
        zero_grad = lambda: layer.zero_grad(set_to_none=True)
        m = memory.measure(lambda: forward(x), zero_grad, torch.device("cpu"), 3, inputs=x)
        kept = [sample["kept_mb"] for sample in m["samples"]]
        out[f"{strategy}/{steps}"] = {**{k: v for k, v in m.items() if k != "samples"}, "kept": kept}
print(json.dumps(out))
"""


@pytest.mark.parametrize("framework", ["torch", "snntorch"])
def test_step_memory_sees_what_the_forward_pass_keeps(framework):
    m = run_python(framework, MEMORY_PROBE, framework)
    sequence_mb = {steps: steps * 4 * 64 * 4 / MB for steps in (50, 200)}  # one [T, B, n] float32 tensor
    for steps, seq in sequence_mb.items():
        vanilla, layer = m[f"vanilla/{steps}"], m[f"checkpoint-layer/{steps}"]
        neuron, chunks = m[f"checkpoint-neuron/{steps}"], m[f"checkpoint-time/{steps}"]
        for name, point in m.items():
            assert point["step_peak_mb"] >= point["kept_mb"] > 0, name
            assert point["step_peak_mb"] == max(point["forward_peak_mb"], point["backward_peak_mb"]), name
            assert point["input_mb"] == pytest.approx(float(name.split("/")[1]) * 4 * 64 * 4 / MB), name
        # storing peaks at the stack of the per-step outputs, chunks at their cat; recomputing peaks in backward
        assert vanilla["peak_phase"] == chunks["peak_phase"] == "forward"
        assert layer["peak_phase"] == neuron["peak_phase"] == "backward"
        # checkpointing the whole layer keeps its output spikes (one sequence) and little else
        assert seq <= layer["kept_mb"] < 1.2 * seq
        # per neuron: the Linear's output as well (Liang et al.'s store-only-the-synapses)
        assert 2 * seq <= neuron["kept_mb"] < 2.2 * seq
        # vanilla keeps the neuron's state of every step too: more than either
        assert vanilla["kept_mb"] > 1.3 * neuron["kept_mb"]
        # chunks recompute one chunk at a time: the lowest peak
        assert chunks["step_peak_mb"] < min(neuron["step_peak_mb"], vanilla["step_peak_mb"])
        # the saved-tensor hooks count what autograd saved, the input included (allocated before the step)
        assert vanilla["saved_tensors_mb"] >= vanilla["kept_mb"] - seq
        # every step the same: blocks a library keeps from one step to the next (snnTorch does) and frees
        # during the next are not part of that step
        for name, point in m.items():
            assert max(point["kept"]) - min(point["kept"]) < 0.02 * max(point["kept"]), name
    # what is kept grows linearly with T
    assert m["vanilla/200"]["kept_mb"] / m["vanilla/50"]["kept_mb"] == pytest.approx(4, rel=0.1)


HAND_NETWORK = """
import json
import snntorch
import torch
from torch import nn
from snnbench.training import lif, models, neurobench_metrics as nbm
from snnbench.training.spec import NEURON

torch.manual_seed(0)
weights = torch.tensor(json.loads(WEIGHTS), dtype=torch.float32)
spikes = torch.tensor(json.loads(SPIKES), dtype=torch.float32)  # (batch, time, inputs)
out = {}
for name, scale in (("reference", 3.0), ("snntorch", 0.3)):
    linear = nn.Linear(4, 3, bias=False)
    with torch.no_grad():
        linear.weight.copy_(weights * scale)
    if name == "reference":  # the reference neuron with beta 0.5: any input spike (0.5 x 3 > 1) fires
        neuron, framework = lif.ReferenceLIF({**NEURON, "beta": 0.5}), "torch"
    else:  # snnTorch below threshold: every current changes the membrane, nothing fires
        leaky = snntorch.Leaky(beta=0.5, threshold=1.0, reset_mechanism="zero")
        cell = lambda i, m: leaky(i, torch.zeros_like(i) if m is None else m)
        neuron, framework = models.StepLoop(cell, "unbind"), "snntorch"
        neuron.leaky = leaky
    layer = models.Layer(linear, 1.0, neuron, "TBN")
    net = nbm.BatchFirst(layer, time_first=True)
    results = nbm.run_benchmark(net, nbm.neuron_class(framework, layer), spikes)
    with torch.no_grad():
        fired = net(spikes)
    out[name] = {"columns": nbm.columns(results, framework), "fired": int(fired.sum())}
print(json.dumps(out))
"""

# Known weights (3 neurons x 4 inputs; neuron 2 has none) and known input spikes (batch 2, T 3, 4 inputs).
WEIGHTS = [[1, 0, 1, 0], [0, 1, 1, 1], [0, 0, 0, 0]]
SPIKES = [
    [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]],
    [[0, 1, 1, 0], [0, 0, 0, 0], [1, 0, 0, 0]],
]


def hand_count() -> dict:
    """The metrics counted by hand from WEIGHTS and SPIKES."""
    fan_out = [sum(1 for row in WEIGHTS if row[i]) for i in range(4)]  # nonzero weights leaving each input
    batch, steps = len(SPIKES), len(SPIKES[0])
    acs = sum(fan_out[i] for sample in SPIKES for step in sample for i, s in enumerate(step) if s)
    # a neuron fires at a step when any input it is connected to spikes (the reference network)
    fired = sum(
        any(s and WEIGHTS[j][i] for i, s in enumerate(step)) for sample in SPIKES for step in sample for j in range(3)
    )
    # snnTorch's membrane (below threshold) changes wherever it receives a current or still decays; NeuroBench
    # counts the whole first step, then every change
    updates = batch * 3
    for sample in SPIKES:
        for j in range(3):
            charged = any(sample[0][i] and WEIGHTS[j][i] for i in range(4))
            for step in sample[1:]:
                current = any(step[i] and WEIGHTS[j][i] for i in range(4))
                updates += charged or current
                charged = charged or current
    return {
        "footprint": 3 * 4 * 4,  # float32 weights; the neurons hold no parameters or buffers
        "connection_sparsity": sum(w == 0 for row in WEIGHTS for w in row) / 12,
        "effective_acs": acs / batch,
        "dense": steps * 4 * 3,  # per sample: every input to every neuron at every step
        "fired": fired,
        "activation_sparsity": 1 - fired / (batch * steps * 3),
        "membrane_updates": updates / batch,
    }


def test_neurobench_metrics_match_a_hand_count():
    code = f"WEIGHTS = {json.dumps(json.dumps(WEIGHTS))}\nSPIKES = {json.dumps(json.dumps(SPIKES))}\n" + HAND_NETWORK
    measured = run_python("neurobench", code)
    hand = hand_count()
    reference, snn = measured["reference"]["columns"], measured["snntorch"]["columns"]
    assert measured["reference"]["fired"] == hand["fired"] > 0
    assert reference["nb_footprint_bytes"] == hand["footprint"]
    assert reference["nb_connection_sparsity"] == pytest.approx(hand["connection_sparsity"], abs=1e-4)
    assert reference["nb_synops_effective_acs"] == pytest.approx(hand["effective_acs"])  # spikes in: ACs
    assert reference["nb_synops_effective_macs"] == 0
    assert reference["nb_synops_dense"] == pytest.approx(hand["dense"])
    assert reference["nb_activation_sparsity"] == pytest.approx(hand["activation_sparsity"])
    # MembraneUpdates reads snnTorch's `mem`: counted there, said to be unmeasurable for the others
    assert snn["nb_membrane_updates"] == pytest.approx(hand["membrane_updates"])
    assert snn["nb_footprint_bytes"] > hand["footprint"]  # snnTorch's Leaky keeps beta and threshold as buffers
    assert reference["nb_membrane_updates"].startswith("not measurable: NeuroBench's MembraneUpdates reads")


def test_neurobench_environment_keeps_the_libraries_torch():
    versions = run_python(
        "neurobench",
        "import json, torch, neurobench, snntorch; from importlib import metadata as m; "
        "print(json.dumps({'torch': torch.__version__, 'neurobench': m.version('neurobench')}))",
    )
    pins = (REPO / "envs" / "torch.yaml").read_text()
    assert f"torch=={versions['torch'].split('+')[0]}" in pins  # torchaudio pulled no other torch
    assert versions["neurobench"].startswith("2.")
