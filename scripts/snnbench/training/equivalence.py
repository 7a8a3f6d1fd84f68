"""Do the libraries implement the same neuron? Spike trains and weight gradients on shared weights.

`python -m snnbench.training.equivalence [--frameworks torch snntorch ...] [--out FILE]` runs each
framework in its own environment (a child process: `... equivalence child FRAMEWORK DIR`) on
the same weights, input and input gain (n = 64, T = 50, batch 4 by default), then compares with
the plain-PyTorch reference: the fraction of (t, b, i) entries whose spike differs, the spike
rates, the step of the first difference, and the relative difference and cosine of the weight
gradient of loss = sum(spikes * r) for a fixed random r. Frameworks that implement the spec
must match within `SPIKE_TOLERANCE`; those with a documented difference in dynamics
(`spikes_differ` in spec.FRAMEWORKS) are reported, not judged. Gradients are reported: the
surrogate and the reset's gradient differ between libraries by design (see `differences`).
The workflow environment runs the parent (numpy only); the children need torch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from snnbench.training.spec import FRAMEWORKS, NEURON

SPIKE_TOLERANCE = 1e-3  # largest fraction of differing spike entries for "same neuron"
RATE_TOLERANCE = 0.01  # largest relative difference of the spike rate
SHAPE = {"n": 64, "T": 50, "batch": 4}
# A deliberately different neuron for checking the check: the reference with a subtractive reset.
BROKEN = "torch-subtract-reset"


def shared_inputs(n: int, steps: int, batch: int, seed: int) -> dict[str, np.ndarray]:
    """Weights (PyTorch's default Linear range), input and readout, the same for every framework."""
    rng = np.random.default_rng(seed)
    bound = 1.0 / np.sqrt(n)
    return {
        "weight": rng.uniform(-bound, bound, size=(n, n)).astype(np.float32),
        "x": rng.standard_normal((steps, batch, n)).astype(np.float32),
        "readout": rng.standard_normal((steps, batch, n)).astype(np.float32),
    }


def run_child(framework: str, workdir: Path) -> dict[str, np.ndarray]:
    """In the framework's environment: spikes [T, B, n] and dL/dW on the shared inputs."""
    import torch

    from snnbench.training import lif, models

    torch.set_num_threads(1)
    with np.load(workdir / "inputs.npz") as data:
        inputs = {k: torch.from_numpy(data[k]) for k in data.files}
    n = inputs["weight"].shape[0]
    gain, _ = lif.calibrate_gain(NEURON, inputs["weight"], inputs["x"], NEURON["target_rate"])
    name = "torch" if framework == BROKEN else framework
    layer = models.build(name, NEURON, n, gain, "unbind", 1, "cpu", torch.float32)
    if framework == BROKEN:
        layer.neuron = lif.ReferenceLIF(NEURON, reset="subtract")
    with torch.no_grad():
        layer.linear.weight.copy_(inputs["weight"])
    x, readout = inputs["x"], inputs["readout"]
    if layer.layout == "BTN":
        x, readout = x.transpose(0, 1).contiguous(), readout.transpose(0, 1).contiguous()
    spikes = layer(x)
    (spikes * readout).sum().backward()
    if layer.layout == "BTN":
        spikes = spikes.transpose(0, 1)
    out = {
        "spikes": spikes.detach().float().numpy(),
        "grad": layer.linear.weight.grad.numpy(),
        "gain": np.array(gain),
    }
    np.savez(workdir / f"{framework}.npz", **out)
    return out


def compare(reference: dict, other: dict) -> dict:
    """How far `other`'s spikes and weight gradient are from the reference's."""
    ref_s, s = np.asarray(reference["spikes"]), np.asarray(other["spikes"])
    if ref_s.shape != s.shape:
        raise ValueError(f"spike trains of different shapes: {ref_s.shape} and {s.shape}")
    differ = ref_s != s
    steps_differing = np.flatnonzero(differ.any(axis=(1, 2)))
    ref_g, g = np.asarray(reference["grad"], dtype=np.float64), np.asarray(other["grad"], dtype=np.float64)
    norm = np.linalg.norm(ref_g)
    rate_ref, rate = float(ref_s.mean()), float(s.mean())
    return {
        "spike_mismatch_fraction": float(differ.mean()),
        "first_differing_step": int(steps_differing[0]) if steps_differing.size else None,
        "spike_rate": rate,
        "reference_spike_rate": rate_ref,
        "rate_rel_diff": abs(rate - rate_ref) / rate_ref if rate_ref else float("inf"),
        "grad_rel_diff": float(np.linalg.norm(g - ref_g) / norm) if norm else float("nan"),
        "grad_cosine": float((g * ref_g).sum() / (np.linalg.norm(g) * norm)) if norm and np.linalg.norm(g) else None,
    }


def judge(comparison: dict) -> list[str]:
    """Why two spike trains do not come from the same neuron (empty: they do)."""
    problems = []
    if comparison["spike_mismatch_fraction"] > SPIKE_TOLERANCE:
        problems.append(
            f"{comparison['spike_mismatch_fraction']:.2%} of spike entries differ from the reference "
            f"(tolerance {SPIKE_TOLERANCE:.2%}), first at step {comparison['first_differing_step']}"
        )
    if comparison["rate_rel_diff"] > RATE_TOLERANCE:
        problems.append(
            f"spike rate {comparison['spike_rate']:.4f} vs {comparison['reference_spike_rate']:.4f} "
            f"(tolerance {RATE_TOLERANCE:.0%})"
        )
    return problems


def _python(framework: str) -> str:
    from snnbench import environments

    return environments.python(FRAMEWORKS["torch" if framework == BROKEN else framework].environment)


def run(frameworks: list[str], workdir: Path, seed: int = 1, **shape) -> dict:
    """Run every framework (and the reference) on shared inputs; compare each with the reference."""

    shape = {**SHAPE, **shape}
    np.savez(workdir / "inputs.npz", **shared_inputs(shape["n"], shape["T"], shape["batch"], seed))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    outputs, report = {}, {"shape": shape, "seed": seed, "neuron": NEURON, "frameworks": {}}
    order = ["torch", *[f for f in frameworks if f not in ("torch", BROKEN)], BROKEN]
    for framework in order:
        command = [_python(framework), "-m", "snnbench.training.equivalence", "child", framework, str(workdir)]
        proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0:
            report["frameworks"][framework] = {"error": proc.stderr[-2000:]}
            continue
        with np.load(workdir / f"{framework}.npz") as data:
            outputs[framework] = {k: data[k] for k in data.files}
    if "torch" not in outputs:
        raise RuntimeError(f"the reference did not run: {report['frameworks'].get('torch')}")
    for framework, out in outputs.items():
        comparison = compare(outputs["torch"], out)
        comparison["input_gain"] = float(out["gain"])
        fw = FRAMEWORKS.get(framework)
        expected_same = fw is not None and not fw.spikes_differ
        comparison["differences"] = list(fw.differences) if fw else ["deliberately broken: subtractive reset"]
        comparison["expected_same_spikes"] = expected_same
        comparison["problems"] = judge(comparison)
        comparison["equivalent"] = not comparison["problems"]
        if BROKEN in outputs and framework not in ("torch", BROKEN):
            # Frameworks that reset by subtraction should match this variant instead.
            other = compare(outputs[BROKEN], out)
            comparison["vs_subtract_reset_mismatch_fraction"] = other["spike_mismatch_fraction"]
        report["frameworks"][framework] = comparison
    return report


def main(argv: list[str]) -> None:
    if argv and argv[0] == "child":
        run_child(argv[1], Path(argv[2]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frameworks", nargs="+", default=["snntorch", "norse", "sinabs", "spikingjelly", "rockpool"])
    # The reference with a subtractive reset (BROKEN) always runs: it must fail the check.
    parser.add_argument("--out", type=Path, default=None, help="write the report as JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="snnbench-equivalence-") as tmp:
        report = run(args.frameworks, Path(tmp))
    text = json.dumps(report, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")
    for framework, c in report["frameworks"].items():
        if "error" in c:
            print(f"{framework:14s} did not run: {c['error'].splitlines()[-1] if c['error'] else ''}")
            continue
        verdict = "same neuron" if c["equivalent"] else "DIFFERS: " + "; ".join(c["problems"])
        subtract = c.get("vs_subtract_reset_mismatch_fraction")
        print(
            f"{framework:20s} spikes differ {c['spike_mismatch_fraction']:.3%}"
            + (f" (from the subtract-reset variant: {subtract:.3%})" if subtract is not None else "")
            + f", rate {c['spike_rate']:.4f}, grad rel diff {c['grad_rel_diff']:.3g}: {verdict}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
