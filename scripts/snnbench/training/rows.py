"""snn-training records -> table rows: parameters, status, the medians / quartiles / IQR of
forward, backward and step, warm-up, memory, spike rate and the FLOP sanity check."""

from __future__ import annotations

from snnbench.records.columns import outcome_columns
from snnbench.training.spec import strategy_id

# One step's memory (snnbench.training.memory), as the points table's columns. Records from before the
# forward / backward split have no phase columns (None); their rest_mb (peak - kept) is not carried on.
STEP_MEMORY = (
    "step_peak_mb",
    "forward_peak_mb",
    "backward_peak_mb",
    "peak_phase",
    "kept_mb",
    "saved_tensors_mb",
    "input_mb",
)


def training_row(rec: dict, benchmark: dict | None = None) -> dict:
    """One snn-training point as columns: its parameters, status, the medians / quartiles / IQR
    of forward, backward and step (s), warm-up and compile time, memory, spike rate, the FLOP
    sanity check and provenance. A point is valid when it ran and passed the sanity check."""
    spec = rec["point"]
    model = spec["model"]
    training = rec.get("training", {})
    framework = training.get("framework", {})
    row = {
        "experiment": spec["experiment"],
        "model_name": spec["model_name"],
        "simulator": spec["simulator"],
        "framework": spec["simulator"],
        "architecture": model.get("architecture", "linear"),
        "device": spec["device"],
        "threads": spec["resources"]["threads"],
        "dtype": model["dtype"],
        "matmul_precision": model["matmul_precision"],
        "time_loop": model["time_loop"],
        "strategy": model.get("strategy", "vanilla"),
        "chunk": model.get("chunk"),
        "strategy_id": strategy_id(model.get("strategy", "vanilla"), model.get("chunk")),
        "loop": framework.get("time_loop"),
        "n": model["n"],
        "T": model["T"],
        "batch": model["batch"],
        "repetitions": spec["timing"]["repetitions"],
        "seed": spec["seed"],
        "path": spec["path"],
        **outcome_columns(rec),
        "framework_version": framework.get("version"),
        "torch_version": framework.get("torch_version"),
    }
    row.update(benchmark or {})
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    row.update(measurement_columns(training))
    sanity = training["sanity"]
    gradient = (training.get("strategy") or {}).get("gradient_check", {"passed": True})
    # Sanity before performance: a time below the FLOP bound is a measurement error, not a result;
    # a strategy whose gradients differ from vanilla's does not train the same network.
    row["valid"] = bool(sanity["passed"]) and bool(gradient["passed"])
    return row


def measurement_columns(training: dict) -> dict:
    """Times (medians, quartiles), warm-up, memory, activity and the FLOP sanity check of a finished point."""
    columns = {}
    for name in ("forward", "backward", "step"):
        stats = training["timing"][f"{name}_s"]
        columns.update({f"{name}_{k}_s": stats[k] for k in ("median", "q1", "q3", "iqr", "min", "max")})
    warmup = training["timing"]["warmup"]
    columns.update(
        warmup_steps=warmup["steps"],
        warmup_settled=warmup["settled"],
        first_step_s=warmup["first_step_s"],
        compile_s=warmup["compile_s"],
        device_name=training["device"]["name"],
    )
    memory = dict(training["memory"])
    step = memory.pop("step", None) or {}
    columns.update(memory)
    columns.update({k: step.get(k) for k in STEP_MEMORY})
    columns["memory_source"] = step.get("source")
    gradient = (training.get("strategy") or {}).get("gradient_check") or {}
    columns.update(gradient_passed=gradient.get("passed"), gradient_max_rel_diff=gradient.get("max_rel_diff"))
    columns.update((training.get("neurobench") or {}).get("columns") or {})
    columns.update({k: training["activity"][k] for k in ("spike_rate", "target_rate", "reference_rate", "input_gain")})
    sanity = training["sanity"]
    columns.update(
        flops_forward=sanity["flops_forward"],
        peak_flops=sanity["peak_flops"],
        min_forward_s=sanity["min_time_s"]["forward"],
        sanity_passed=sanity["passed"],
        sanity_problems="; ".join(sanity["problems"]),
    )
    return columns
