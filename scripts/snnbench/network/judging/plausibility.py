"""The activity verdict: is a point's network activity plausible? Made once per point, at collect.

Sanity before performance: a point whose network is silent, saturated or regular is not a performance result
(the verdict keeps it out of scaling curves). Judged from the populations' statistics the record holds
(snnbench.network.activity), the model's own problems (NetworkModel.activity_problems) and the bounds that
apply (snnbench.network.judging.activity_bounds): those of the point's reference ensemble, where it was
validated against one (validate_point's `ensemble`: their stats.npz, beside their records; the point itself
left out where it is one of them), else the model's from the config's `activity_check`. An ensemble that
fails the model's bounds or published rates is not used, and the table says why (`activity_reference_problems`).
The bounds are the config's at collect, so changing them re-judges points without rerunning them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from snnbench.network.judging import activity_bounds

# The column in which point_row hands `judge` what a point's activity is judged from; not a column of the table.
INPUTS = "_activity_inputs"


@dataclass(frozen=True)
class Inputs:
    """What a point's activity is judged from: its populations' statistics, the model's bounds (from the config
    and the model's rates), the published rates for its size (rates, source) or None, the model's own problems,
    and the measured window in s."""

    populations: list
    bounds: dict
    published: tuple | None
    model_problems: tuple
    duration_s: float


def inputs(network_model, model: dict, populations: list[dict], results: dict, config_bounds: dict, published):
    """A point's Inputs: bounds from the model's rates (activity_bounds.from_model) on the config's."""
    return Inputs(
        populations=populations,
        bounds=activity_bounds.from_model(config_bounds, network_model.activity_rates(model, results)),
        published=published,
        model_problems=tuple(network_model.activity_problems(model, populations, results)),
        duration_s=model["t_sim_ms"] * 1e-3,
    )


def verdict(
    stats: list[dict],
    bounds: dict,
    reference: tuple[dict, str] | None,
    model_problems: Sequence[str] = (),
    duration_s: float | None = None,
) -> dict:
    """Plausibility (no silent or saturated population, irregular firing, and none of the model's
    own `model_problems`: NetworkModel.activity_problems) and the distance to published rates where
    they exist for this scale (the measurements stay in the record's populations). `bounds`: the config's, or
    resolved by snnbench.network.judging.activity_bounds (per population where they come from a reference
    ensemble; written into the verdict with their source)."""
    problems = activity_bounds.rate_problems(stats, bounds, duration_s)
    for row in stats:
        name = row["population"]
        if row["cv_neurons"] >= bounds["min_neurons_for_cv"]:
            low, high = activity_bounds.at(bounds["min_cv_isi"], name), activity_bounds.at(bounds["max_cv_isi"], name)
            if not low <= row["cv_isi"] <= high:
                problems.append(f"{name} ISI CV {row['cv_isi']:.2f} outside [{low:.3g}, {high:.3g}]")
    problems += model_problems
    result = {
        "checked": True,
        "plausible": not problems,
        "problems": problems,
        "reference": None,
        "bounds": {"source": "default", "basis": "the config's activity_check", **bounds},
    }
    if reference is not None:
        ref_rates, source = reference
        rate = {row["population"]: row["rate_hz"] for row in stats}
        deviation = {p: abs(rate[p] - r) / r for p, r in ref_rates.items()}
        worst = max(deviation.values())
        result["reference"] = {
            "source": source,
            "rates_hz": ref_rates,
            "rel_deviation": {p: round(d, 6) for p, d in deviation.items()},
            "max_rel_deviation": round(worst, 6),
            "within_tolerance": bool(worst <= bounds["reference_max_rel_deviation"]),
        }
    return result


def unchecked(reason: str) -> dict:
    return {
        "checked": False,
        "plausible": None,
        "problems": [reason],
        "reference": None,
        "bounds": None,
    }


def columns(verdict: dict) -> dict:
    """The activity verdict's columns, with the bounds it used and where they came from."""
    ref, used = verdict["reference"], verdict.get("bounds") or {}
    return {
        "activity_checked": verdict["checked"],
        "activity_plausible": verdict["plausible"],
        "activity_problems": "; ".join(verdict["problems"]),
        "activity_bounds_source": used.get("source"),
        "activity_bounds_basis": used.get("basis"),
        "reference_max_rel_deviation": ref["max_rel_deviation"] if ref else np.nan,
        "reference_within_tolerance": ref["within_tolerance"] if ref else None,
        # Sanity before performance: only plausible (or unchecked) finished runs are results; collect
        # also rules out those whose spike statistics are outside the validation tolerance.
        "valid": verdict["plausible"] is not False,
    }


def _folder_index(paths) -> dict[str, int]:
    return {os.path.normpath(str(path)): i for i, path in paths.items()}


def _find(index: dict[str, int], stats_path: str) -> int | None:
    folder = os.path.normpath(os.path.dirname(str(stats_path)))
    if folder in index:
        return index[folder]
    if os.path.isabs(folder):  # a point's path is relative to the workflow's directory
        return index.get(os.path.normpath(os.path.relpath(folder)))
    return None


def _ensembles(points: pd.DataFrame, validations: list) -> dict:
    """Per point (its index in `points`) the populations of its reference ensemble's members in the table
    (the point itself left out)."""
    index, given = _folder_index(points["path"]), points[INPUTS]
    found = {}
    for point, result in validations:
        i = index.get(os.path.normpath(str(point)))
        if i is None:
            continue
        members = (_find(index, path) for path in result.get("ensemble") or [])
        found[i] = [given[j].populations for j in members if j is not None and j != i and isinstance(given[j], Inputs)]
    return found


def _judged(given, members: list) -> dict:
    """The columns of one point: unchecked where `given` is the reason (a str), else the verdict with the
    ensemble's bounds where it has members and they are fit, the model's otherwise."""
    if isinstance(given, str):
        return {**columns(unchecked(given)), "activity_reference_problems": None}
    bounds, problems = given.bounds, []
    if members:
        bounds, problems = activity_bounds.from_ensemble(given.bounds, members, given.duration_s, given.published)
    found = verdict(given.populations, bounds, given.published, given.model_problems, given.duration_s)
    return {**columns(found), "activity_reference_problems": "; ".join(problems) or None}


def judge(points: pd.DataFrame, validations: list) -> pd.DataFrame:
    """points with the activity columns of every point that finished (its INPUTS: Inputs, or the reason it is
    not checked), judged once, and `valid` false where the activity is not plausible; INPUTS dropped."""
    if INPUTS not in points:
        return points
    ensembles = _ensembles(points, validations)
    given = points[INPUTS]
    judged = {i: _judged(g, ensembles.get(i, [])) for i, g in given.items() if isinstance(g, (Inputs, str))}
    points = points.drop(columns=[INPUTS])
    if judged:
        found = pd.DataFrame.from_dict(judged, orient="index")
        for name in found:
            if name not in points:
                points[name] = pd.Series(None, index=points.index, dtype=object)
            points.loc[found.index, name] = found[name].to_numpy()
        points["valid"] = points["valid"].astype(bool)
    return points
