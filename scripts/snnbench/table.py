"""Records -> tidy tables (pandas): one row per point, and one row per point and rank.

This is the one place a metric becomes a column. The activity verdict is recomputed here with
the current bounds from the config, so changing a tolerance re-judges points without rerunning
them; the record keeps the verdict it was written with.
"""

from __future__ import annotations

import csv
import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from snnbench import activity, compare, pd14, validation
from snnbench.simulators.base import PHASES

PHASE_COLUMNS = [f"time_{p}_s" for p in (*PHASES, "total")]


@functools.lru_cache(maxsize=256)
def _reference_rates(neuron_scale: float, indegree_scale: float, input: str):
    return pd14.reference_rates(neuron_scale, indegree_scale, input)


def _point_columns(spec: dict) -> dict:
    res, model = spec["resources"], spec["model"]
    return {
        "experiment": spec["experiment"],
        "simulator": spec["simulator"],
        "scaling": spec["scaling"],
        "nodes": res["nodes"],
        "ranks_per_node": res["ranks_per_node"],
        "threads_per_rank": res["threads_per_rank"],
        "ranks": res["ranks"],
        "vps": res["virtual_processes"],
        "shape": f"{res['nodes']}x{res['ranks_per_node']}x{res['threads_per_rank']}",
        "neuron_scale": model["neuron_scale"],
        "indegree_scale": model["indegree_scale"],
        "input": model["input"],
        "t_presim_ms": model["t_presim_ms"],
        "t_sim_ms": model["t_sim_ms"],
        "seed": spec["seed"],
        "path": spec["path"],
    }


def read_benchmark(path: Path | None) -> dict:
    """Snakemake's own measurement of the execute job (the second, independent timing source).
    Read with the csv module: collect reads one per point, and pandas costs a millisecond each."""
    if path is None or not Path(path).exists():
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows:
        return {}

    def number(text):
        try:
            return float(text)
        except (TypeError, ValueError):
            return np.nan

    return {"job_wall_s": number(rows[-1]["s"]), "job_max_rss_mb": number(rows[-1].get("max_rss"))}


def _outcome_columns(rec: dict) -> dict:
    """Status and provenance columns every record has, whatever its model family."""
    prov = rec["provenance"]
    return {
        "status": rec["status"],
        "failure_reason": (rec["failure"] or {}).get("reason", ""),
        "wall_time_s": rec["wall_time_s"],
        "host": prov["host"]["hostname"],
        "cpu_model": prov["host"]["cpu_model"],
        "load_average_1min": prov["host"]["load_average_1_5_15"][0],
        "git_commit": prov["workflow"]["git_commit"],
        "git_dirty": prov["workflow"]["git_dirty"],
        "benchmark_hash": prov["benchmark_hash"],
        "started_utc": prov["started_utc"],
        "slurm_job_id": (prov.get("slurm") or {}).get("job_id"),
    }


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
        "device": spec["device"],
        "threads": spec["resources"]["threads"],
        "dtype": model["dtype"],
        "matmul_precision": model["matmul_precision"],
        "time_loop": model["time_loop"],
        "loop": framework.get("time_loop"),
        "n": model["n"],
        "T": model["T"],
        "batch": model["batch"],
        "repetitions": spec["timing"]["repetitions"],
        "seed": spec["seed"],
        "path": spec["path"],
        **_outcome_columns(rec),
        "framework_version": framework.get("version"),
        "torch_version": framework.get("torch_version"),
    }
    row.update(benchmark or {})
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    for name in ("forward", "backward", "step"):
        stats = training["timing"][f"{name}_s"]
        row.update({f"{name}_{k}_s": stats[k] for k in ("median", "q1", "q3", "iqr", "min", "max")})
    warmup = training["timing"]["warmup"]
    row.update(
        {
            "warmup_steps": warmup["steps"],
            "warmup_settled": warmup["settled"],
            "first_step_s": warmup["first_step_s"],
            "compile_s": warmup["compile_s"],
        }
    )
    row["device_name"] = training["device"]["name"]
    row.update({k: v for k, v in training["memory"].items()})
    row.update({k: training["activity"][k] for k in ("spike_rate", "target_rate", "reference_rate", "input_gain")})
    sanity = training["sanity"]
    row.update(
        {
            "flops_forward": sanity["flops_forward"],
            "peak_flops": sanity["peak_flops"],
            "min_forward_s": sanity["min_time_s"]["forward"],
            "sanity_passed": sanity["passed"],
            "sanity_problems": "; ".join(sanity["problems"]),
        }
    )
    # Sanity before performance: a time below the FLOP bound is a measurement error, not a result.
    row["valid"] = bool(sanity["passed"])
    return row


def point_row(rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
    if rec["point"].get("model_name") == "snn-training":
        return training_row(rec, benchmark)
    spec, prov = rec["point"], rec["provenance"]
    row = _point_columns(spec)
    row.update(_outcome_columns(rec))
    row.update(
        {
            "gpus": spec["resources"].get("gpus", 0),
            "gpu_model": (prov.get("gpu") or {}).get("name"),
        }
    )
    row.update(benchmark or {})
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    row.update({f"time_{p}_s": t for p, t in rec["phases_s"].items()})
    row["real_time_factor"] = rec["real_time_factor"]
    row.update(rec["memory"])
    row.update(rec["network"])
    row["simulator_version"] = rec["simulator"]["version"]
    for key in ("delay_bins", "synapse_objects", "gpu_memory_peak_mb"):  # Brian2's devices
        if key in rec["simulator"]:
            row[key] = rec["simulator"][key]
    if "build" in rec["simulator"]:
        row["binary_reused"] = rec["simulator"]["build"]["binary_reused"]
    for phase, timers in rec["simulator_timers_s"].items():
        row.update({f"timer_{phase}_{name}_s": value for name, value in timers.items()})

    if rec["populations"]:
        model = spec["model"]
        reference = _reference_rates(model["neuron_scale"], model["indegree_scale"], model["input"])
        verdict = activity.verdict(rec["populations"], bounds, reference)
        for pop in rec["populations"]:
            row[f"rate_{pop['population']}_hz"] = pop["rate_hz"]
            row[f"cv_isi_{pop['population']}"] = pop["cv_isi"]
    else:
        verdict = rec["activity"]
    row["activity_checked"] = verdict["checked"]
    row["activity_plausible"] = verdict["plausible"]
    row["activity_problems"] = "; ".join(verdict["problems"])
    ref = verdict["reference"]
    row["reference_max_rel_deviation"] = ref["max_rel_deviation"] if ref else np.nan
    row["reference_within_tolerance"] = ref["within_tolerance"] if ref else None
    # Sanity before performance: only plausible (or unchecked) finished runs are results; collect
    # also rules out those whose spike statistics are outside the validation tolerance.
    row["valid"] = verdict["plausible"] is not False
    return row


def rank_rows(rec: dict) -> list[dict]:
    if not rec.get("ranks"):  # failed points, and snn-training points (one process, no ranks)
        return []
    base = _point_columns(rec["point"])
    rows = []
    for r in rec.get("ranks", []):
        row = dict(base)
        row.update(
            {
                "rank": r["rank"],
                "host": r["host"],
                "peak_rss_mb": r["peak_rss_mb"],
                "local_synapses": r["local_synapses"],
            }
        )
        row.update({f"time_{p}_s": t for p, t in r["phases_s"].items()})
        rows.append(row)
    return rows


def _arrow_column(values: pd.Series) -> pa.Array:
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one column (e.g. 2 and "2x"): as text
        return pa.array(values.map(lambda v: None if pd.isna(v) else str(v)), from_pandas=True)


def write_table(frame: pd.DataFrame, path) -> None:
    """A table as CSV (booleans as true/false, empty for missing), written by Arrow: about six
    times faster than pandas for the long tables of large experiments (24 validation rows per
    point). Read back with read_points."""
    columns = {str(name): _arrow_column(frame[name]) for name in frame.columns}
    pa_csv.write_csv(pa.table(columns), path)


def read_points(path) -> pd.DataFrame:
    """A points.csv as written by collect. Read whole (not in chunks): sparse columns such as
    rates_agree_with_nest (empty for most rows) would otherwise get a type per chunk."""
    return pd.read_csv(path, low_memory=False)


def add_efficiency(points: pd.DataFrame) -> pd.DataFrame:
    """Parallel efficiency of the simulate phase against the smallest VP count of the same
    experiment, simulator and (for strong scaling) model size, from medians over seeds.

    strong: E = T(v0) v0 / (T(v) v); weak: E = T(v0) / T(v).
    """
    points = points.copy()
    points["efficiency"] = np.nan
    if "time_simulate_s" not in points:
        return points
    valid = points[points["valid"].astype(bool) & points["time_simulate_s"].notna()]
    if valid.empty:
        return points
    strong = valid["scaling"] == "strong"
    # The group a point is compared within: weak scaling grows the model with the VPs.
    group = (
        valid["experiment"].astype(str)
        + "|"
        + valid["simulator"].astype(str)
        + "|"
        + valid["neuron_scale"].astype(str).where(strong, "")
        + "|"
        + valid["indegree_scale"].astype(str).where(strong, "")
    )
    medians = valid.groupby([group, valid["vps"]])["time_simulate_s"].median()
    first = medians.reset_index().sort_values("vps").groupby("level_0").first()
    v0 = group.map(first["vps"])
    t0 = group.map(first["time_simulate_s"])
    ratio = t0 / valid["time_simulate_s"]
    points.loc[valid.index, "efficiency"] = ratio.where(~strong, ratio * v0 / valid["vps"])
    return points


def _read_json(path) -> dict:
    with open(path) as f:
        return json.load(f)


def collect_tables(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    validation_paths: list | None = None,
    tolerance: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """points, ranks and validation tables of some records, with Snakemake's benchmarks and the
    validation results (validate_point) of the same points where given. The validation verdict
    is judged here with the current tolerance (validation.judge_table): a point outside it is
    not valid. validation: one row per point, population and statistic."""
    benchmark_paths = benchmark_paths or [None] * len(record_paths)
    validation_paths = validation_paths or [None] * len(record_paths)
    rows, ranks, checks = [], [], []
    distances, distance_paths = [], []  # the long validation table: rows, and the point of each
    for path, bench, val in zip(record_paths, benchmark_paths, validation_paths, strict=True):
        rec = _read_json(path)
        rows.append(point_row(rec, bounds, read_benchmark(bench)))
        ranks += rank_rows(rec)
        if val:
            result = _read_json(val)
            point = rec["point"]["path"]
            checks.append(
                {
                    "path": point,
                    "checked": result["checked"],
                    "reason": result.get("reason"),
                    "reference": result.get("reference"),
                }
            )
            distances += result["rows"]
            distance_paths += [point] * len(result["rows"])
    points = pd.DataFrame(rows)
    long = pd.DataFrame(distances).assign(path=distance_paths) if distances else pd.DataFrame()
    if checks and tolerance is not None:
        judged = validation.judge_table(long, pd.DataFrame(checks), tolerance)
        points = points.join(judged, on="path")
        points["valid"] = points["valid"].astype(bool) & (points["validation_passed"] != False)  # noqa: E712
    else:
        points["validation_checked"] = False
        points["validation_passed"] = None
        points["validation_problems"] = "not validated"
    points = compare.add_agreement(add_efficiency(points))
    keys = [
        k for k in ("experiment", "simulator", "vps", "device", "time_loop", "n", "T", "batch", "seed") if k in points
    ]
    points = points.sort_values(keys, ignore_index=True)
    if not long.empty:
        keys = ["experiment", "simulator", "shape", "neuron_scale", "seed", "path"]  # the rest: points.csv by path
        reference = pd.DataFrame(checks).set_index("path")["reference"]
        long = points[keys].merge(long.assign(reference=long["path"].map(reference)), on="path", how="right")
    return points, pd.DataFrame(ranks), long


def collect(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    validation_paths: list | None = None,
    tolerance: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """points and ranks tables (see collect_tables)."""
    points, ranks, _ = collect_tables(record_paths, bounds, benchmark_paths, validation_paths, tolerance)
    return points, ranks
