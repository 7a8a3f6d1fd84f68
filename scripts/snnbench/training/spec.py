"""The written specification of the benchmark network, and the frameworks that implement it.

Pure Python (no torch): the workflow's own environment reads it to expand the config, and every
framework environment reads it to build its network.

The network (one layer, the question Open Neuromorphic's 2023 "SNN library benchmarks" asked):

    input  x[t] in R^{B x n}, t = 0 .. T-1, i.i.d. N(0, 1) from the point's seed
    synapse I[t] = W x[t]                 W: Linear(n, n, bias=False), PyTorch's default init
                                          U(-1/sqrt(n), 1/sqrt(n)); the only trainable parameter
    neuron  v[t] = beta * u[t-1] + (1 - beta) * g * I[t]        u[-1] = 0
            s[t] = H(v[t] - theta)        one spike at most per neuron and step
            u[t] = v[t] * (1 - s[t])      reset to zero in the same step
    loss    sum of all spikes (any scalar works: the benchmark times the graph, not learning)

beta and theta are fixed (not trained). The spike's gradient is a surrogate: the arctangent
(dS/dv = (alpha/2) / (1 + (pi/2 * alpha * (v - theta))^2), alpha = 2, as in snnTorch's
`atan` and SpikingJelly's `ATan`); the reset is detached from the gradient (snnTorch's
default). The input gain g is calibrated per point on the reference implementation so that
the layer fires `target_rate` spikes per neuron and step; every framework gets the same g, so
their spike rates match when they implement the same neuron.

The second network (`architectures: [conv, conv-bn]`, CONV below) is the seed paper's Conv/FC stack with the
same neuron after every layer (snnbench.training.convnet).

Each framework maps these parameters onto its own parameterisation (see FRAMEWORKS and
snnbench.training.models); where a library cannot express a detail, the difference is listed
in `differences` and measured by the equivalence test (snnbench.training.equivalence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# The neuron and the input, as data. Units: time in steps (dt = 1 step), voltages in units of theta.
NEURON = {
    "model": "LIF, discrete time, current-based input, no synaptic state",
    "beta": 0.9,  # membrane decay per step: tau_mem = -1 / ln(beta) = 9.49 steps
    "threshold": 1.0,  # theta
    "reset": "zero",  # u = 0 after a spike, in the same step
    "spikes": "single",  # at most one spike per neuron and step
    "surrogate": "atan",  # dS/dv = (alpha/2) / (1 + (pi/2 alpha (v - theta))^2)
    "surrogate_alpha": 2.0,
    "reset_gradient": "detached",
    "trainable": ["linear.weight"],
    "bias": False,
    "input": "x ~ N(0, 1) i.i.d. over time, batch and neurons",
    "target_rate": 0.1,  # spikes per neuron and step that the input gain is calibrated to
}


def tau_mem_steps(beta: float) -> float:
    """Membrane time constant in steps for an exponential-decay parameterisation exp(-1/tau) = beta."""
    return -1.0 / math.log(beta)


@dataclass(frozen=True)
class Framework:
    """One library (or one of its backends) implementing NEURON."""

    environment: str  # envs/<environment>.yaml, installed as .venv-<environment>
    api: str  # the public API used
    package: str | None  # distribution whose version goes into the record
    time_loop: str  # "ours": snnbench writes the loop over time steps; "library": the library runs it
    layout: str = "TBN"  # input layout the API takes: time-first or batch-first ("BTN")
    cuda_only: bool = False  # its kernels run only on CUDA devices
    unavailable: str | None = None  # why this framework cannot run anywhere here (documented skip)
    differences: tuple[str, ...] = field(default_factory=tuple)  # known departures from NEURON
    spikes_differ: bool = False  # a difference in dynamics: its spike trains are expected to differ


FRAMEWORKS = {
    "torch": Framework(
        environment="torch",
        api="plain PyTorch: snnbench.training.lif.ReferenceLIF (the reference)",
        package="torch",
        time_loop="ours",
    ),
    "snntorch": Framework(
        environment="snntorch",
        api="snntorch.Leaky(beta, threshold, reset_mechanism='zero', reset_delay=False, spike_grad=atan)",
        package="snntorch",
        time_loop="ours",
        differences=("input scaled by (1 - beta) outside the neuron: Leaky integrates v = beta v + I",),
    ),
    "norse": Framework(
        environment="norse",
        api="norse.torch.Lift(LIFBoxCell(LIFBoxParameters(tau_mem_inv, v_th, v_reset=0, method='super')))",
        package="norse",
        time_loop="library",
        differences=(
            "surrogate SuperSpike dS/dv = 1 / (|v - theta| + 1)^2 (norse has no arctangent; same peak of 1)",
            "the reset is not detached from the gradient (LIFBoxCell has no option for it)",
            "explicit Euler form v + dt tau_mem_inv (-v + i): beta = 1 - dt tau_mem_inv, same values, other rounding",
        ),
    ),
    "sinabs": Framework(
        environment="sinabs",
        api="sinabs.layers.LIF(tau_mem, spike_fn=SingleSpike, reset_fn=MembraneReset, norm_input=True)",
        package="sinabs",
        time_loop="library",
        layout="BTN",
        differences=(
            "beta = exp(-1/tau_mem) computed by sinabs from tau_mem: last-bit rounding",
            "spikes where v >= theta (the reference: v > theta)",
        ),
    ),
    "sinabs-exodus": Framework(
        environment="sinabs-exodus",
        api="sinabs.exodus.layers.LIF (EXODUS CUDA kernels)",
        package="sinabs-exodus",
        time_loop="library",
        layout="BTN",
        cuda_only=True,
        differences=("not run here (no GPU): written against the documented API, check the equivalence test",),
    ),
    "spikingjelly": Framework(
        environment="spikingjelly",
        api="spikingjelly.activation_based.neuron.LIFNode(tau, v_reset=0, step_mode='m', surrogate ATan)",
        package="spikingjelly",
        time_loop="library",
        differences=("spikes where v >= theta (snnTorch and the reference: v > theta)",),
    ),
    "rockpool": Framework(
        environment="rockpool",
        api="rockpool.nn.modules.LIFNeuronTorch(tau_mem, max_spikes_per_dt=1, spike_generation_fn=atan)",
        package="rockpool",
        time_loop="library",
        layout="BTN",
        differences=(
            "resets by subtracting theta (rockpool has no reset to zero): other spike trains; the gain is "
            "calibrated on rockpool's own neuron so the spike rate still matches",
            "the reset is not detached from the gradient",
            "spikes where v >= theta",
        ),
        spikes_differ=True,
    ),
    "rockpool-exodus": Framework(
        environment="rockpool-exodus",
        api="rockpool.nn.modules.LIFExodus (sinabs-exodus CUDA kernels)",
        package="rockpool",
        time_loop="library",
        layout="BTN",
        cuda_only=True,
        differences=(
            "a synaptic current with tau_syn = dt / 10 (LIFExodus has no neuron without one)",
            "resets by subtracting theta",
            "not run here (no GPU): written against the documented API, check the equivalence test",
        ),
        spikes_differ=True,
    ),
    "lava-dl": Framework(
        environment="lava-dl",
        api="lava.lib.dl.slayer.neuron.cuba",
        package="lava-dl",
        time_loop="library",
        unavailable=(
            "lava-dl 0.6 needs Python 3.10, torch < 2.4 and numpy < 2; PyPI has no CPU build of such a torch "
            "for this machine (only torch 2.13.0+cpu for Python 3.11), so envs/lava-dl.yaml is not installed here"
        ),
    ),
}

# What the forward pass keeps for the backward pass (snnbench.training.strategies says what each does).
STRATEGIES = ("vanilla", "checkpoint-layer", "checkpoint-neuron", "checkpoint-time", "library")
CHUNKED = ("checkpoint-time", "library")  # strategies crossed with the chunk length (time steps per chunk)
# The library's own memory-saving mode: None where it has one that runs on CPU, else why not.
LIBRARY_MODES = {
    "spikingjelly": None,  # activation_based.memopt (its multi-step cupy / triton neurons need CUDA)
    "torch": "the plain-PyTorch reference has no mode of its own (its checkpointing is the checkpoint-* strategies)",
    "snntorch": "snnTorch 1.0 has no memory-saving or fused training mode",
    "norse": "Norse 1.1 has no memory-saving or fused training mode",
    "sinabs": "sinabs' fused mode is sinabs-exodus (EXODUS CUDA kernels; the framework sinabs-exodus), CUDA only",
    "rockpool": "Rockpool's fused mode is LIFExodus (the framework rockpool-exodus), CUDA only",
}
# Libraries whose membrane snnbench carries from one chunk of time steps to the next
# (snnbench.training.strategies.STATE), and why the others' cannot be.
CHUNK_STATE = ("torch", "snntorch", "norse", "spikingjelly", "sinabs")
NO_CHUNK_STATE = {
    "rockpool": (
        "LIFNeuronTorch keeps only batch element 0 of its membrane after a call, detached "
        "(self.vmem = vmem[0].detach()), so no gradient can flow from one chunk of time steps to the next"
    ),
}


def strategy_id(strategy: str, chunk: int | None) -> str:
    """The strategy as paths and tables name it: checkpoint-time-c25 for chunks of 25 time steps."""
    return f"{strategy}-c{chunk}" if chunk else strategy


def strategy_not_offered(framework: str, strategy: str) -> str | None:
    """Why `framework` cannot train with `strategy` here (None: it can)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}")
    if strategy == "library":
        reason = LIBRARY_MODES.get(framework, f"{framework} has no memory-saving mode known to snnbench")
        return f"not offered: {reason}" if reason else None
    if strategy == "checkpoint-time" and framework not in CHUNK_STATE:
        reason = NO_CHUNK_STATE.get(framework, f"snnbench does not carry {framework}'s membrane between chunks")
        return f"not offered: {reason}"
    return None


# The networks a point trains (snnbench.training.convnet builds the convolutional ones).
ARCHITECTURES = ("linear", "conv", "conv-bn")
# The seed paper's CIFAR10-sized Conv/FC stack (Liang et al., DATE 2022), every layer followed by NEURON; n is
# the hidden FC layer's width. Input: x ~ N(0, 1) i.i.d. over time, batch, channels and pixels, of CIFAR10's
# shape [T, B, 3, 32, 32] (synthetic: nothing is downloaded). conv-bn puts BatchNorm2d (over T x B samples)
# after each convolution. Biases off, PyTorch's default init from the seed.
CONV = {
    "image": (3, 32, 32),  # channels, height, width
    "channels": (32, 32, 64),  # conv 3x3, padding 1: 3 -> 32, 32 -> 32, max-pool 2, 32 -> 64, max-pool 2
    "classes": 10,  # FC(64 x 8 x 8 -> n) LIF, FC(n -> 10) LIF
}
# Frameworks that cannot express the convolutional network, and why (their conv points are skipped).
CONV_NOT_OFFERED = {
    "rockpool": (
        "Rockpool has no convolution module, and its torch neurons (LIFNeuronTorch, LIFExodus) take "
        "(batch, time, channels) with a fixed neuron count: a feature map would have to be flattened into them, "
        "which snnbench does not do"
    ),
}
CONV_NOT_OFFERED["rockpool-exodus"] = CONV_NOT_OFFERED["rockpool"]


def architecture_not_offered(framework: str, architecture: str) -> str | None:
    """Why `framework` cannot build `architecture` here (None: it can)."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}")
    if architecture == "linear" or framework not in CONV_NOT_OFFERED:
        return None
    return f"not offered: {CONV_NOT_OFFERED[framework]}"


TIME_LOOPS = ("unbind", "index")  # how our loops take x[t]: x.unbind(0), or indexing x[t]
DEVICES = ("cpu", "cuda")
DTYPES = ("float32", "float64", "bfloat16", "float16")
MATMUL_PRECISIONS = ("highest", "high", "medium")  # torch.set_float32_matmul_precision


def skip_reason(spec: dict) -> str | None:
    """Why a point cannot run whatever the machine (None: it can be tried)."""
    fw = FRAMEWORKS[spec["simulator"]]
    if fw.unavailable:
        return f"{spec['simulator']}: {fw.unavailable}"
    if fw.cuda_only and spec["device"] != "cuda":
        return f"no GPU kernels on CPU: {spec['simulator']} is CUDA-only ({fw.api})"
    architecture = spec["model"].get("architecture", "linear")
    not_offered = architecture_not_offered(spec["simulator"], architecture)
    if not_offered:
        return f"{spec['simulator']}, architecture {architecture}: {not_offered}"
    not_offered = strategy_not_offered(spec["simulator"], spec["model"].get("strategy", "vanilla"))
    if not_offered:
        return f"{spec['simulator']}, strategy {spec['model']['strategy']}: {not_offered}"
    if spec["model"]["time_loop"] == "index" and architecture != "linear":
        return f"time_loop 'index' applies to the linear network only (the {architecture} network's loops unbind)"
    if spec["model"]["time_loop"] == "index" and fw.time_loop == "library":
        return (
            f"{spec['simulator']} runs the loop over time steps itself; time_loop 'index' applies to frameworks "
            "whose loop snnbench writes (torch, snntorch)"
        )
    return None
