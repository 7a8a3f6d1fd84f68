"""Run one snn-training point in this (fresh) process: `python -m snnbench.training.run SPEC OUTDIR`.

Runs in the framework's own environment. Builds the layer (or the convolutional network,
snnbench.training.convnet), calibrates the input gain on the
reference, times forward / backward / step (snnbench.training.timing), measures memory and the
spike rate, and writes OUTDIR/result.json: status "ok", or "skipped" with the reason when the
point cannot run on this machine (no usable GPU). The parent (snnbench.run.child) turns
it into the point's record.
"""

from __future__ import annotations

import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import torch

from snnbench.machine.process_memory import process_mb
from snnbench.run import result as child_result
from snnbench.training import convnet, gradients, lif, models, neurobench_metrics, sanity, strategies, timing
from snnbench.training import memory as step_memory
from snnbench.training.spec import FRAMEWORKS, NEURON, strategy_id

DTYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _version(package: str | None) -> str | None:
    try:
        return metadata.version(package) if package else None
    except metadata.PackageNotFoundError:
        return None


def device_facts(device: torch.device, threads: int) -> dict:
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return {
            "type": "cuda",
            "name": props.name,
            "memory_gb": props.total_memory / 2**30,
            "cuda_version": torch.version.cuda,
            "cudnn_version": torch.backends.cudnn.version(),
        }
    return {"type": "cpu", "name": platform.processor() or platform.machine(), "torch_threads": threads}


def framework_facts(spec: dict) -> dict:
    framework = FRAMEWORKS[spec["simulator"]]
    return {
        "name": spec["simulator"],
        "api": framework.api,
        "package": framework.package,
        "version": _version(framework.package),
        "torch_version": torch.__version__,
        "time_loop": spec["model"]["time_loop"] if framework.time_loop == "ours" else "library",
        "differences": list(framework.differences),
    }


def build_calibrated(spec: dict, device, dtype):
    """The framework's layer and its input, with the input gain calibrated: on the reference (the
    spec's neuron), then on the framework's own neuron so that its spike rate matches (the same
    gain where the framework implements the spec). Returns layer, input and the activity facts."""
    if spec["model"].get("architecture", "linear") != "linear":
        return build_calibrated_conv(spec, device, dtype)
    model, name, seed = spec["model"], spec["simulator"], spec["seed"]
    n, steps, batch = model["n"], model["T"], model["batch"]
    x_tbn = lif.make_input(steps, batch, n, seed, device, dtype)
    start = time.perf_counter()
    weight = lif.linear(n, seed, device, dtype).weight.detach()
    # The rate over the whole sequence (its start from rest fires differently from the steady state),
    # on two batch elements: a 1e3-fold sample of n x T spikes is plenty for the rate.
    calib_batch = min(batch, 2)
    reference_gain, reference_rate = lif.calibrate_gain(NEURON, weight, x_tbn[:, :calib_batch], NEURON["target_rate"])
    x = x_tbn if FRAMEWORKS[name].layout == "TBN" else x_tbn.transpose(0, 1).contiguous()
    del x_tbn, weight
    layer = models.build(name, NEURON, n, reference_gain, model["time_loop"], seed, device, dtype)
    models.check_trainable(layer, NEURON)
    gain, _ = models.calibrate(layer, x, NEURON["target_rate"], reference_rate, max_batch=calib_batch)
    activity = {
        "target_rate": NEURON["target_rate"],
        "reference_rate": reference_rate,
        "input_gain": gain,
        "reference_input_gain": reference_gain,
        "calibrate_s": time.perf_counter() - start,
    }
    with torch.no_grad():
        activity = {"spike_rate": float(layer(x).float().mean()), **activity}
    return layer, x, activity


def build_calibrated_conv(spec: dict, device, dtype):
    """The convolutional network (snnbench.training.convnet) and its input, each block's gain calibrated on
    the reference network (first two batch elements), the same gains for every framework."""
    model, name, seed = spec["model"], spec["simulator"], spec["seed"]
    x = convnet.make_input(model["T"], model["batch"], seed, device, dtype)
    start = time.perf_counter()
    reference = convnet.build("torch", NEURON, model["architecture"], model["n"], None, seed, device, dtype)
    gains, reference_rates = convnet.calibrate(reference, x[:, :2], NEURON["target_rate"])
    del reference
    net = convnet.build(name, NEURON, model["architecture"], model["n"], gains, seed, device, dtype)
    convnet.check_trainable(net)
    rates = convnet.layer_rates(net, x)
    activity = {
        "spike_rate": sum(rates) / len(rates),  # the blocks' mean: each was calibrated to the target
        "layer_spike_rates": rates,
        "target_rate": NEURON["target_rate"],
        "reference_rate": sum(reference_rates) / len(reference_rates),
        "input_gain": gains[0],
        "input_gains": gains,
        "calibrate_s": time.perf_counter() - start,
    }
    return net, x, activity


def run(spec: dict, outdir: Path) -> dict:
    model = spec["model"]
    result = {"status": "ok", "framework": framework_facts(spec)}
    if spec["device"] == "cuda" and not torch.cuda.is_available():
        result.update(status="skipped", reason=f"no GPU: torch {torch.__version__} sees no CUDA device")
        return result
    device, threads = torch.device(spec["device"]), spec["resources"]["threads"]
    torch.set_num_threads(threads)
    torch.set_float32_matmul_precision(model["matmul_precision"])
    result["device"] = device_facts(device, threads)
    rss_start = process_mb("VmRSS")
    layer, x, activity = build_calibrated(spec, device, DTYPES[model["dtype"]])
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(device)
    rss_before = process_mb("VmRSS")
    strategy = strategy_facts(spec, layer, x)
    forward = strategies.forward_of(layer, spec["simulator"], strategy["name"], strategy["chunk"])
    measured = timing.measure(
        lambda: forward(x),
        lambda: layer.zero_grad(set_to_none=True),
        device,
        repetitions=spec["timing"]["repetitions"],
        min_warmup=spec["timing"]["warmup_min_steps"],
        max_warmup=spec["timing"]["warmup_max_steps"],
    )
    memory = {"rss_start_mb": rss_start, "rss_before_timing_mb": rss_before, "peak_rss_mb": process_mb("VmHWM")}
    if device.type == "cuda":
        memory["cuda_max_allocated_mb"] = torch.cuda.max_memory_allocated(device) / 2**20
        memory["cuda_max_reserved_mb"] = torch.cuda.max_memory_reserved(device) / 2**20
        peak, source = sanity.gpu_peak_flops(result["device"]["name"], model["dtype"], model["matmul_precision"])
    else:
        peak, source = sanity.cpu_peak_flops(threads)
    repetitions = spec["timing"].get("memory_repetitions", 3)
    zero_grad = lambda: layer.zero_grad(set_to_none=True)  # noqa: E731
    memory["step"] = step_memory.measure(lambda: forward(x), zero_grad, device, repetitions, inputs=x)
    medians = {k: measured[f"{k}_s"]["median"] for k in ("forward", "backward", "step")}
    conv = model.get("architecture", "linear") != "linear"
    flops = convnet.flops(model["T"], model["batch"], model["n"]) if conv else None
    check = sanity.check(medians, model["T"], model["batch"], model["n"], peak, flops)
    check["peak_source"] = source
    result.update(
        timing=measured,
        memory=memory,
        activity=activity,
        sanity=check,
        trainable_parameters=(convnet.trainable if conv else models.trainable)(layer),
        neuron=NEURON,
        strategy=strategy,
        neurobench=neurobench_metrics.invoke(spec, activity.get("input_gains", activity["input_gain"]), outdir),
    )
    return result


def strategy_facts(spec: dict, layer, x) -> dict:
    """The point's memory strategy, and its gradients checked against vanilla's on a small case."""
    name, chunk = spec["model"].get("strategy", "vanilla"), spec["model"].get("chunk")
    facts = {"name": name, "chunk": chunk, "id": strategy_id(name, chunk)}
    if name == "vanilla":
        facts["gradient_check"] = {"passed": True, "reference": "this is vanilla BPTT"}
    else:
        facts["gradient_check"] = gradients.check(layer, spec["simulator"], name, chunk, x)
    return facts


def versions(done: dict) -> dict:
    return {"framework": done["framework"]["version"], "torch": torch.__version__}


if __name__ == "__main__":
    child_result.main(sys.argv[1:], run, versions)
