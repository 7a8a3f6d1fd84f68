"""NeuroBench's metrics (PyPI `neurobench` 2.x, not re-implemented) of a training point's network on its input.

`python -m snnbench.training.neurobench_metrics SPEC OUT` runs in envs/neurobench.yaml's environment
(NeuroBench's own pins: snntorch, tonic < 2, torchaudio, numba) and writes OUT: the metrics of the
library's layer (snnbench.training.models) or convolutional network (snnbench.training.convnet: one
gain per block), built with the point's calibrated gains, seed and input:

- static: Footprint (bytes of parameters and buffers), ConnectionSparsity (zero weights / weights
  of the Linear and Conv layers);
- workload, on the point's input (batch-first, per sample): ActivationSparsity (zero outputs /
  outputs of the neuron module), SynapticOperations (Effective_MACs where the Linear's input is not
  binary, Effective_ACs where it is spikes, Dense), MembraneUpdates.

A metric NeuroBench cannot measure for a library is a sentence starting "not measurable" that says
why, never 0: MembraneUpdates reads the `mem` attribute of snnTorch neurons only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch import nn

from snnbench.training import convnet, lif, models
from snnbench.training.spec import FRAMEWORKS, NEURON

COLUMNS = (
    "nb_footprint_bytes",
    "nb_connection_sparsity",
    "nb_activation_sparsity",
    "nb_synops_effective_macs",
    "nb_synops_effective_acs",
    "nb_synops_dense",
    "nb_membrane_updates",
)


class BatchFirst(nn.Module):
    """NeuroBench feeds (batch, time, features*) and counts samples on dim 0: time-first layers are
    transposed in and out."""

    def __init__(self, net: nn.Module, time_first: bool):
        super().__init__()
        self.net = net
        self.time_first = time_first

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.time_first:
            return self.net(x)
        return self.net(x.transpose(0, 1)).transpose(0, 1)


class OneBatch(list):
    """A one-batch data loader as NeuroBench's Benchmark reads it (len, iteration, .dataset)."""

    def __init__(self, x: torch.Tensor):
        super().__init__([(x, torch.zeros(x.shape[0]))])
        self.dataset = range(x.shape[0])


def neuron_class(framework: str, net: nn.Module) -> type:
    """The module NeuroBench hooks as the activation (neuron) layer."""
    if framework == "snntorch":
        import snntorch

        return snntorch.SpikingNeuron  # what NeuroBench's SNNTorchModel registers
    return type(net.blocks[0].neuron if hasattr(net, "blocks") else net.neuron)


def run_benchmark(net: nn.Module, activation: type, x_btn: torch.Tensor) -> dict:
    """NeuroBench's Benchmark over one batch; returns its results dict."""
    from neurobench.benchmarks import Benchmark
    from neurobench.metrics.static import ConnectionSparsity, Footprint
    from neurobench.metrics.workload import ActivationSparsity, MembraneUpdates, SynapticOperations
    from neurobench.models import TorchModel

    model = TorchModel(net)
    model.add_activation_module(activation)
    static = [Footprint, ConnectionSparsity]
    workload = [ActivationSparsity, SynapticOperations, MembraneUpdates]
    with torch.no_grad():
        return Benchmark(model, OneBatch(x_btn), [], [], [static, workload]).run(quiet=True)


def columns(results: dict, framework: str) -> dict:
    """The metrics as points.csv columns; a metric that cannot be measured says why."""
    synops = results["SynapticOperations"]
    out = {
        "nb_footprint_bytes": results["Footprint"],
        "nb_connection_sparsity": results["ConnectionSparsity"],
        "nb_activation_sparsity": results["ActivationSparsity"],
        "nb_synops_effective_macs": synops["Effective_MACs"],
        "nb_synops_effective_acs": synops["Effective_ACs"],
        "nb_synops_dense": synops["Dense"],
        "nb_membrane_updates": results["MembraneUpdates"],
    }
    if framework != "snntorch":
        out["nb_membrane_updates"] = (
            "not measurable: NeuroBench's MembraneUpdates reads the `mem` attribute of snnTorch neurons; "
            f"{FRAMEWORKS[framework].api.split('(')[0]} keeps its membrane elsewhere"
        )
    return out


def unmeasured(reason: str) -> dict:
    return {"columns": dict.fromkeys(COLUMNS, reason)}


def measure(spec: dict) -> dict:
    """The metrics of `spec`'s layer (framework, n, T, batch, seed, gain, time_loop) on its input."""
    framework, n, seed = spec["framework"], spec["n"], spec["seed"]
    try:
        models.BUILDERS[framework](NEURON, 1, spec["time_loop"], "cpu", torch.float32)
    except ImportError as error:
        return unmeasured(f"not measurable: {framework} is not in NeuroBench's environment ({error})")
    torch.manual_seed(seed)
    architecture = spec.get("architecture", "linear")
    if architecture != "linear":  # the gains of its blocks
        layer = convnet.build(framework, NEURON, architecture, n, spec["gain"], seed, "cpu", torch.float32)
        x_btn = convnet.make_input(spec["T"], spec["batch"], seed, "cpu", torch.float32).transpose(0, 1)
    else:
        layer = models.build(framework, NEURON, n, spec["gain"], spec["time_loop"], seed, "cpu", torch.float32)
        x_btn = lif.make_input(spec["T"], spec["batch"], n, seed, "cpu", torch.float32, layout="BTN")
    net = BatchFirst(layer, time_first=layer.layout == "TBN")
    results = run_benchmark(net, neuron_class(framework, layer), x_btn)
    return {"columns": columns(results, framework), "neurobench": results}


def invoke(point: dict, gain: float | list[float], workdir: Path, time_limit_s: float = 600) -> dict:
    """Run this module in NeuroBench's environment for a training point (called by its child process)."""
    import subprocess

    from snnbench import environments

    model = point["model"]
    if model.get("strategy", "vanilla") != "vanilla":
        return unmeasured("not measured: computed on the vanilla point (a strategy changes neither network nor input)")
    try:
        python = environments.python("neurobench")
    except Exception as error:  # no .venv-neurobench here: say so, do not fail the timing point
        return unmeasured(f"not measured: no NeuroBench environment ({error}); make env-neurobench")
    spec = {"framework": point["simulator"], "seed": point["seed"], "gain": gain}
    spec.update({k: model[k] for k in ("n", "T", "batch", "time_loop")})
    spec["architecture"] = model.get("architecture", "linear")
    spec_path, out = workdir / "neurobench_spec.json", workdir / "neurobench.json"
    spec_path.write_text(json.dumps(spec))
    cmd = [python, "-m", "snnbench.training.neurobench_metrics", str(spec_path), str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=time_limit_s)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return unmeasured(f"not measured: NeuroBench's run failed ({last})")
    return json.loads(out.read_text())


def main(argv: list[str]) -> None:
    spec_path, out = Path(argv[0]), Path(argv[1])
    from importlib import metadata

    report = measure(json.loads(spec_path.read_text()))
    report["versions"] = {"neurobench": metadata.version("neurobench"), "torch": torch.__version__}
    out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
