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

from snnbench import activity, pd14, validation
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


def validation_columns(result: dict | None, tolerance: dict | None) -> dict:
    """The validation verdict (re-judged with the current tolerance) and, per statistic, the
    largest distance to the reference run and between seeds over populations."""
    if result is None or tolerance is None:
        return {"validation_checked": False, "validation_passed": None, "validation_problems": "not validated"}
    judged = validation.verdict(result, tolerance)
    row = {
        "validation_checked": judged["checked"],
        "validation_passed": judged["passed"],
        "validation_problems": "; ".join(judged["problems"]),
        "validation_reference": result.get("reference"),
    }
    for stat, worst in judged["worst"].items():
        row[f"ks_{stat}_max"] = worst["ks"]
        row[f"wasserstein_{stat}_max"] = worst["wasserstein"]
        row[f"ks_seeds_{stat}_max"] = worst["ks_seeds"]
        row[f"validation_excess_{stat}"] = worst["excess"]  # KS / allowed: above 1 fails
    return row


def point_row(
    rec: dict,
    bounds: dict,
    benchmark: dict | None = None,
    validation_result: dict | None = None,
    tolerance: dict | None = None,
) -> dict:
    spec, prov = rec["point"], rec["provenance"]
    row = _point_columns(spec)
    row.update(
        {
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
    )
    row.update(benchmark or {})
    row.update(validation_columns(validation_result, tolerance))
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    row.update({f"time_{p}_s": t for p, t in rec["phases_s"].items()})
    row["real_time_factor"] = rec["real_time_factor"]
    row.update(rec["memory"])
    row.update(rec["network"])
    row["simulator_version"] = rec["simulator"]["version"]
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
    # Sanity before performance: only plausible (or unchecked) finished runs whose statistics
    # match their reference run (or were not compared) are results.
    row["valid"] = verdict["plausible"] is not False and row["validation_passed"] is not False
    return row


def rank_rows(rec: dict) -> list[dict]:
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


def validation_rows(rec: dict, result: dict) -> list[dict]:
    """The long validation table: per point, population and statistic, the sample and its
    distances to the reference run and between seeds."""
    base = _point_columns(rec["point"])
    base["reference"] = result.get("reference")
    return [dict(base, **row) for row in result.get("rows", [])]


def collect(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    validation_paths: list | None = None,
    tolerance: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """points and ranks tables of some records, with Snakemake's benchmarks and the validation
    results (validate_point) of the same points where given."""
    benchmark_paths = benchmark_paths or [None] * len(record_paths)
    validation_paths = validation_paths or [None] * len(record_paths)
    rows, ranks = [], []
    for path, bench, val in zip(record_paths, benchmark_paths, validation_paths, strict=True):
        rec = json.loads(Path(path).read_text())
        result = json.loads(Path(val).read_text()) if val else None
        rows.append(point_row(rec, bounds, read_benchmark(bench), result, tolerance))
        ranks += rank_rows(rec)
    points = add_efficiency(pd.DataFrame(rows))
    return points.sort_values(["experiment", "simulator", "vps", "seed"], ignore_index=True), pd.DataFrame(ranks)


def collect_validation(record_paths: list, validation_paths: list) -> pd.DataFrame:
    rows = []
    for path, val in zip(record_paths, validation_paths, strict=True):
        rows += validation_rows(json.loads(Path(path).read_text()), json.loads(Path(val).read_text()))
    return pd.DataFrame(rows)
