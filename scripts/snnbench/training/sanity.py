"""Physical lower bounds on training-step times, and the check that rejects faster results.

The layer's synapses alone cost 2 T B n^2 floating-point operations in the forward pass
(I = W x for every step and batch element) and as many in the backward pass (dL/dW = sum over
steps of g x^T). No implementation can run them faster than the device's peak rate, so a
measured time below flops / peak means the measurement is wrong: typically a GPU timer that did
not wait for the kernels (no synchronisation), or a loop that did not run.

Peaks are upper bounds by construction: for NVIDIA GPUs the datasheet's dense peak of the
fastest variant of that GPU family, for CPUs cores x maximum clock x the widest vector FMA
the CPU advertises. Pure Python (the workflow environment checks records with it too).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Dense peaks in TFLOP/s from NVIDIA's datasheets: FP32 (CUDA cores), TF32 tensor cores
# (torch's "high"/"medium" float32 matmul precision) and FP16/BF16 tensor cores. Where a
# family has several variants (SXM/PCIe/NVL) the fastest is listed: a bound must not be too low.
GPU_PEAK_TFLOPS = {
    "H200": {"fp32": 67.0, "tf32": 494.7, "half": 989.4},  # H200 datasheet (same SM as H100 SXM)
    "H100": {"fp32": 67.0, "tf32": 494.7, "half": 989.4},  # H100 SXM datasheet, dense
    "A100": {"fp32": 19.5, "tf32": 156.0, "half": 312.0},  # A100 datasheet, dense
    "L40S": {"fp32": 91.6, "tf32": 183.0, "half": 362.05},  # L40S datasheet, dense
    "V100": {"fp32": 15.7, "tf32": 15.7, "half": 125.0},  # V100 SXM2 datasheet (no TF32)
    "RTX 2070": {"fp32": 7.88, "tf32": 7.88, "half": 63.0},  # 2304 cores x 1.71 GHz x 2 (FE boost)
    "RTX 4090": {"fp32": 82.6, "tf32": 82.6, "half": 330.3},  # Ada whitepaper (FP16 acc. FP32, dense)
}
# An unknown GPU: above any single GPU's dense peak today (B200 dense FP16: 2.25 PFLOP/s).
UNKNOWN_GPU_PEAK_TFLOPS = 2500.0


def layer_flops(steps: int, batch: int, n: int) -> float:
    """FLOPs of the synapses in one pass: 2 T B n^2 (a multiply and an add per weight and input)."""
    return 2.0 * steps * batch * n * n


def gpu_peak_flops(device_name: str, dtype: str, matmul_precision: str) -> tuple[float, str]:
    """Peak FLOP/s of an NVIDIA GPU by name, for the arithmetic the point uses, and its source."""
    kind = "half" if dtype in ("float16", "bfloat16") else ("fp32" if matmul_precision == "highest" else "tf32")
    if dtype == "float64":
        kind = "fp32"  # FP64 is slower than FP32 everywhere: FP32 is still an upper bound
    for family, peaks in GPU_PEAK_TFLOPS.items():
        if family.lower() in device_name.lower():
            return peaks[kind] * 1e12, f"datasheet peak of {family}, {kind}"
    return UNKNOWN_GPU_PEAK_TFLOPS * 1e12, f"unknown GPU {device_name!r}: bound of {UNKNOWN_GPU_PEAK_TFLOPS} TFLOP/s"


def cpu_peak_flops(threads: int, cpuinfo: str | None = None, max_khz: int | None = None) -> tuple[float, str]:
    """Upper bound on FP32 FLOP/s of `threads` cores: cores x max clock x FLOPs per cycle, where
    FLOPs per cycle assume two FMA units of the widest vector width the CPU advertises."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags = set(re.search(r"^flags\s*:(.*)$", cpuinfo, re.M).group(1).split()) if "flags" in cpuinfo else set()
    if "avx512f" in flags:
        per_cycle, isa = 64, "AVX-512"  # 2 FMA x 16 lanes x 2 FLOPs
    elif "avx2" in flags or "fma" in flags:
        per_cycle, isa = 32, "AVX2/FMA"  # 2 FMA x 8 lanes x 2
    else:
        per_cycle, isa = 16, "SSE or unknown"  # generous for 4-lane SIMD
    if max_khz is None:
        max_khz = _max_khz(cpuinfo)
    cores = max(1, min(threads, os.cpu_count() or threads))
    return (
        cores * max_khz * 1e3 * per_cycle,
        f"{cores} cores x {max_khz / 1e6:.2f} GHz x {per_cycle} FLOP/cycle ({isa})",
    )


def _max_khz(cpuinfo: str) -> int:
    path = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        pass
    mhz = [float(m) for m in re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", cpuinfo, re.M)]
    # Without a cpufreq maximum, 1.5 x the current clock (turbo headroom), at least 5 GHz.
    return int(max(5.0e6, 1.5 * max(mhz, default=0.0) * 1e3))


def check(times_s: dict, steps: int, batch: int, n: int, peak_flops: float, flops: float | None = None) -> dict:
    """Compare measured medians with the bounds. `times_s` maps forward/backward/step to seconds.

    forward >= F / peak, backward >= F / peak (dL/dW alone), step >= 2 F / peak, F = 2 T B n^2
    (or `flops`, the synapses' FLOPs of another network: snnbench.training.convnet.flops).
    """
    flops = layer_flops(steps, batch, n) if flops is None else flops
    bounds = {"forward": flops / peak_flops, "backward": flops / peak_flops, "step": 2 * flops / peak_flops}
    problems = []
    for name, bound in bounds.items():
        measured = times_s.get(name)
        if measured is not None and measured < bound:
            problems.append(
                f"{name} {measured:.3g} s is faster than its synapses allow ({bound:.3g} s = "
                f"{flops * (2 if name == 'step' else 1):.3g} FLOP at {peak_flops:.3g} FLOP/s): not a valid timing"
            )
    return {
        "flops_forward": flops,
        "peak_flops": peak_flops,
        "min_time_s": bounds,
        "passed": not problems,
        "problems": problems,
    }
