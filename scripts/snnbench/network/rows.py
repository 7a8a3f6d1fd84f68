"""PD14 records -> table rows: the point's parameters, phase times, memory, network, activity, and the
verdicts, each made here once for all points (snnbench.network.judging: plausible activity, validation,
parallel efficiency, agreement of rates with the reference, spike match, the group verdict per simulator),
with the config's current bounds and tolerances, so changing one re-judges points without rerunning them.
Records hold only what was measured (those of schema version 1 also a verdict, ignored here).
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd

from snnbench.environments import builds
from snnbench.machine import interference
from snnbench.network import activity, binding, models, race, simulators
from snnbench.network.judging import group_verdict, plausibility, rate_agreement, same_network, validity
from snnbench.network.phases import DETAIL
from snnbench.records.columns import outcome_columns


@functools.lru_cache(maxsize=256)
def _reference_rates(model_name: str, neuron_scale: float, indegree_scale: float, input: str):
    params = {"neuron_scale": neuron_scale, "indegree_scale": indegree_scale, "input": input}
    return models.get(model_name).reference_rates(params)


def _point_columns(spec: dict) -> dict:
    res, model = spec["resources"], spec["model"]
    return {
        "experiment": spec["experiment"],
        "model_name": spec.get("model_name", models.DEFAULT),
        "simulator": spec["simulator"],
        # The simulator's build, where the experiment names builds (else empty) and both together,
        # the series of such an experiment's figures.
        "build": (spec.get("build") or {}).get("name", ""),
        "simulator_build": builds.label(spec),
        "scaling": spec["scaling"],
        "nodes": res["nodes"],
        "ranks_per_node": res["ranks_per_node"],
        "threads_per_rank": res["threads_per_rank"],
        "ranks": res["ranks"],
        "vps": res["virtual_processes"],
        "shape": f"{res['nodes']}x{res['ranks_per_node']}x{res['threads_per_rank']}",
        "neuron_scale": model["neuron_scale"],
        "indegree_scale": model["indegree_scale"],
        # The network description the point read (a model derived into one), else empty.
        "network_description": models.get(spec.get("model_name", models.DEFAULT)).description_key(model),
        "input": model["input"],
        # The network NEST exported and every simulator read (pd14.network_seed), else empty: drawn by each.
        "network_seed": model.get("network_seed"),
        "t_presim_ms": model["t_presim_ms"],
        "t_sim_ms": model["t_sim_ms"],
        # A network changed on purpose (the model's `perturbation`), as canonical JSON; empty: the model as published.
        "perturbation": json.dumps(model["perturbation"], sort_keys=True) if model.get("perturbation") else "",
        "seed": spec["seed"],
        "path": spec["path"],
    }


# What Brian2's and GeNN's backends report of their build and numerics (the record's `simulator`).
SIMULATOR_KEYS = (
    "delay_bins",
    "synapse_objects",
    "gpu_memory_peak_mb",
    "connectivity",
    "procedural_threads_per_spike",
    "precision",
    "neuron_model",
)


def detail_column(label: str) -> str:
    return f"{DETAIL}{label}_s"


def simulator_columns(rec: dict) -> dict:
    """The simulator's version, what it reports (SIMULATOR_KEYS), its binary's reuse, its timers per phase
    and, for a simulator that names detailed timers of the simulate phase (its registry entry), those under
    their labels in its order (empty where this record lacks one: the build had no detailed timers)."""
    simulator = rec["simulator"]
    row = {"simulator_version": simulator["version"]}
    row.update({key: simulator[key] for key in SIMULATOR_KEYS if key in simulator})
    if "build" in simulator:
        row["binary_reused"] = simulator["build"]["binary_reused"]
    for phase, timers in rec["simulator_timers_s"].items():
        row.update({f"timer_{phase}_{name}_s": value for name, value in timers.items()})
    entry = simulators.registered().get(rec["point"]["simulator"])
    simulate = rec["simulator_timers_s"].get("simulate", {})
    for label, timer in (entry.detailed_timers if entry else {}).items():
        row[detail_column(label)] = simulate.get(timer)
    return row


def interference_columns(rec: dict) -> dict:
    """CPU time per phase beside wall time, who else used the point's CPUs over simulate, and the verdict
    `disturbed` (machine.interference.disturbed: judged here, at collect; None where not measured: records
    written before 2026-11-28, or without /proc)."""
    found = rec.get("interference") or {}
    columns = {f"cpu_{phase}_s": t for phase, t in (rec.get("phases_cpu_s") or {}).items()}
    columns.update(
        others_cpu_fraction=found.get("others_fraction"),
        steal_s=found.get("steal_s"),
        cpu_pressure_s=found.get("pressure_s"),
        disturbed=interference.disturbed(found.get("others_fraction")),
    )
    return columns


def point_row(rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
    spec, prov = rec["point"], rec["provenance"]
    row = _point_columns(spec)
    row.update(outcome_columns(rec))
    row.update(
        {
            "gpus": spec["resources"].get("gpus", 0),
            "gpu_model": (prov.get("gpu") or {}).get("name"),
        }
    )
    row.update(benchmark or {})
    row.update(binding.columns(rec))  # asked, obtained, each working thread's CPUs
    row.update(race.record_columns(rec))  # recipe, spikes and synaptic events, energy, E_syn
    row.update(build_columns(prov.get("build")))
    if rec["status"] != "ok":
        row["valid"] = False
        return row
    row.update({f"time_{p}_s": t for p, t in rec["phases_s"].items()})
    row.update(interference_columns(rec))
    row["real_time_factor"] = rec["real_time_factor"]
    row.update(rec["memory"])
    row.update(rec["network"])
    row["valid"] = True  # a finished point is a result until a verdict at collect says otherwise
    row.update(simulator_columns(rec))

    network_model = models.get(spec.get("model_name", models.DEFAULT))
    row.update(network_model.table_columns(rec.get("model_results") or {}))
    row[plausibility.INPUTS] = activity_inputs(rec, network_model, bounds)
    row.update(activity.table_columns(rec.get("populations") or []))
    return row


def activity_inputs(rec: dict, network_model, bounds: dict):
    """What a finished point's activity is judged from at collect (plausibility.Inputs), or why it is not."""
    spec = rec["point"]
    name, model = spec.get("model_name", models.DEFAULT), spec["model"]
    if not rec.get("populations"):
        return f"spikes not recorded ({name}.record_spikes: false)"
    published = _reference_rates(name, model["neuron_scale"], model["indegree_scale"], model["input"])
    results = rec.get("model_results") or {}
    return plausibility.inputs(network_model, model, rec["populations"], results, bounds, published)


def build_columns(build: dict | None) -> dict:
    """The provenance of a point's build: its environment's key, what it was made from, the version
    the simulator reports, and for a source tree `git describe`, uncommitted changes, CMake
    options and compiler."""
    if not build:
        return {}
    made_from = build.get("build", {})
    source = build.get("source_state") or {}
    return {
        "build_key": build.get("key"),
        "build_spec": made_from.get("pip") or made_from.get("source") or " ".join(made_from.get("modules", [])) or None,
        # A module build: the modules it loaded, name/version each (its dependencies included).
        "build_modules": " ".join((build.get("modules") or {}).get("loaded", [])) or None,
        "build_version": (build.get("simulator") or {}).get("version"),
        "build_source_describe": source.get("describe"),
        "build_source_dirty": source.get("dirty"),
        "build_cmake": " ".join(f"-D{k}={v}" for k, v in (build.get("cmake") or {}).items()) or None,
        "build_compiler": build.get("compiler"),
        "build_pip_freeze_sha256": build.get("pip_freeze_sha256"),
    }


def rank_rows(rec: dict) -> list[dict]:
    if not rec.get("ranks"):  # failed points have no rank outputs
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
        + valid["simulator_build"].astype(str)
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


def finish_table(
    points: pd.DataFrame, validations: list, tolerance: dict | None, reference: str = rate_agreement.REFERENCE
):
    """The activity verdict (plausibility.judge) and the validation verdict judged with the current tolerance
    (validity.judge_table: a point outside either is not valid), parallel efficiency, and rate agreement, the
    spike match and the group verdict with each experiment's reference simulator (`validation_reference`: what
    its points were validated against, else `reference`, the model's). Returns the points and the long
    validation table (one row per point, population and statistic)."""
    points = plausibility.judge(points, validations)
    checks, distances, distance_paths = [], [], []
    for point, result in validations:
        checks.append(
            {
                "path": point,
                "checked": result["checked"],
                "reason": result.get("reason"),
                "reference": result.get("reference"),
                "reference_simulator": result.get("reference_simulator"),
            }
        )
        distances += result["rows"]
        distance_paths += [point] * len(result["rows"])
    long = pd.DataFrame(distances).assign(path=distance_paths) if distances else pd.DataFrame()
    if checks and tolerance is not None:
        judged = validity.judge_table(long, pd.DataFrame(checks), tolerance)
        points = points.join(judged, on="path")
        points["valid"] = points["valid"].astype(bool) & (points["validation_passed"] != False)  # noqa: E712
    else:
        points["validation_checked"] = False
        points["validation_passed"] = None
        points["validation_problems"] = "not validated"
    points = _with_reference(add_efficiency(points), reference, long)
    # The ensemble's per-run values stay in validation.json (lists: not columns of a CSV).
    long = long.drop(columns=[c for c in ("ensemble_ks", "ensemble_means", "ensemble_sems") if c in long])
    if not long.empty:
        keys = ["experiment", "simulator", "shape", "neuron_scale", "seed", "path"]  # the rest: points.csv by path
        reference_point = pd.DataFrame(checks).set_index("path")["reference"]
        long = points[keys].merge(long.assign(reference=long["path"].map(reference_point)), on="path", how="right")
    return points, long


def _with_reference(points: pd.DataFrame, default: str, long: pd.DataFrame) -> pd.DataFrame:
    """Each experiment's reference simulator in `validation_reference` (the one its validation named,
    else `default`), its rate agreement, spike match and each simulator's group verdict with it."""
    stored = points["experiment"]
    if "context_for" in points:  # a shared ensemble's runs count as the experiment's reference seeds here
        points = points.assign(experiment=points["context_for"].fillna(stored))
    parts = []
    for _, part in points.groupby("experiment", sort=False, dropna=False):
        reference = rate_agreement.reference_of(part, default)
        part = part.assign(validation_reference=reference)
        part = same_network.add_spike_match(rate_agreement.add_agreement(part, reference), reference)
        parts.append(group_verdict.add_verdicts(part, long, reference))
    joined = pd.concat(parts).loc[points.index] if parts else points.assign(validation_reference=default)
    return joined.assign(experiment=stored)
