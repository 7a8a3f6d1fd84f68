"""The activity verdict judged again at collect with the bounds of each point's reference ensemble.

A point that was validated against an ensemble of the reference simulator's seeds (validate_point's
`ensemble`: their stats.npz, beside their records) is judged by bounds from those runs' population
statistics (snnbench.network.activity_bounds.from_ensemble), the point itself left out where it is one of
them; the ensemble is first checked against the model's bounds and published rates, and where it fails the
point keeps the model's bounds and the table says why (`activity_reference_problems`). Nothing reruns: the
statistics are the records'.
"""

from __future__ import annotations

import os

import pandas as pd

from snnbench.network import activity, activity_bounds


def _folder_index(paths) -> dict[str, int]:
    return {os.path.normpath(str(path)): i for i, path in paths.items()}


def _find(index: dict[str, int], stats_path: str) -> int | None:
    folder = os.path.normpath(os.path.dirname(str(stats_path)))
    if folder in index:
        return index[folder]
    if os.path.isabs(folder):  # a point's path is relative to the workflow's directory
        return index.get(os.path.normpath(os.path.relpath(folder)))
    return None


def rejudge(points: pd.DataFrame, validations: list, column: str, columns) -> pd.DataFrame:
    """points with the activity columns (`columns(verdict)`) of each point that has a reference ensemble
    judged again by its bounds, `activity_reference_problems` added and the inputs' `column` (point_row's
    tuple: populations, model bounds, published rates, model problems, window in s) dropped."""
    if column not in points:
        return points
    index = _folder_index(points["path"])
    inputs = points[column]
    updates = {}
    for point, result in validations:
        i = index.get(os.path.normpath(str(point)))
        if i is None or not isinstance(inputs[i], tuple):
            continue
        populations, model, published, model_problems, duration_s = inputs[i]
        found = (_find(index, path) for path in result.get("ensemble") or [])
        members = [inputs[j][0] for j in found if j is not None and j != i and isinstance(inputs[j], tuple)]
        if not members:
            continue
        bounds, problems = activity_bounds.from_ensemble(model, members, duration_s, published)
        verdict = activity.verdict(populations, bounds, published, model_problems, duration_s)
        updates[i] = {**columns(verdict), "activity_reference_problems": "; ".join(problems) or None}
    points = points.drop(columns=[column])
    if updates:
        changed = pd.DataFrame.from_dict(updates, orient="index")
        for name in changed:
            if name not in points:
                points[name] = pd.Series(None, index=points.index, dtype=object)
            points.loc[changed.index, name] = changed[name].to_numpy()
        points["valid"] = points["valid"].astype(bool)
    return points
