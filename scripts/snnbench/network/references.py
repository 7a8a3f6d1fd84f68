"""Which runs each point's spikes are compared with, chosen from the config alone before
anything ran (the workflow's DAG asks per point, so the indexes are built once): the reference
simulator (one per experiment, for validation, rate agreement, the spike match and the figures), the
reference run and ensemble, the point's other seeds, and the points whose distributions the figures show."""

from __future__ import annotations

import json

from snnbench.environments.builds import label


def _model_key(spec: dict) -> str:
    return json.dumps(spec["model"], sort_keys=True)


def reference_simulator(experiment: dict, model_default: str) -> str:
    """The experiment's one reference simulator: its `validation.reference`, else the model's
    `reference_simulator` where the experiment runs it, else the first simulator listed."""
    named = experiment.get("validation", {}).get("reference")
    if named:
        return named
    return model_default if model_default in experiment["simulators"] else experiment["simulators"][0]


def _is(point: dict, simulator: str | None) -> bool:
    return simulator is not None and simulator in (label(point), point["simulator"])


def _order(simulators: list[str], reference: str | None = None):
    def key(p):
        res = p["resources"]
        first = 0 if _is(p, reference) else 1
        return (first, simulators.index(label(p)), res["virtual_processes"], res["nodes"], res["ranks"], p["seed"])

    return key


def reference_index(
    points: list[dict], simulators: dict[str, list[str]] | None = None, references: dict[str, str] | None = None
) -> dict[str, str]:
    """The run each point is compared with by default (point path -> reference path): of the
    same experiment's points of the same model (size, input, durations), the reference simulator's
    (references: experiment name -> simulator; else the first simulator listed), the fewest virtual
    processes (then nodes, ranks), the lowest seed. Chosen from the config alone, before anything ran.
    simulators: experiment name -> its simulators in order (default: in the order the points list
    them, as expansion does)."""
    return {path: members[0] for path, members in ensemble_index(points, simulators, references).items()}


def ensemble_index(
    points: list[dict], simulators: dict[str, list[str]] | None = None, references: dict[str, str] | None = None
) -> dict[str, list[str]]:
    """The reference ensemble of each point (point path -> paths, the reference run first): the
    reference run's seeds, that is the same experiment's points of the reference simulator, shape and
    model, in seed order."""
    if simulators is None:
        simulators = {}
        for p in points:
            order = simulators.setdefault(p["experiment"], [])
            if label(p) not in order:
                order.append(label(p))
    groups: dict = {}
    for p in points:
        groups.setdefault((p["experiment"], _model_key(p)), []).append(p)
    references = references or {}
    index = {}
    for (experiment, _), members in groups.items():
        reference = min(members, key=_order(simulators[experiment], references.get(experiment)))
        same = [p for p in members if label(p) == label(reference) and p["resources"] == reference["resources"]]
        ensemble = [p["path"] for p in sorted(same, key=lambda p: p["seed"])]
        index.update({p["path"]: ensemble for p in members})
    return index


def seed_peer_index(points: list[dict], max_peers: int | None = None) -> dict[str, list[str]]:
    """For every point, the paths of its other seeds (same experiment, simulator, resources and
    model), in one pass: all of them, or the `max_peers` next ones in seed order (wrapping around),
    so that planning stays linear in the number of seeds."""
    groups: dict = {}
    for p in points:
        key = (p["experiment"], label(p), json.dumps(p["resources"], sort_keys=True), _model_key(p))
        groups.setdefault(key, []).append(p)
    index = {}
    for members in groups.values():
        paths = [p["path"] for p in sorted(members, key=lambda p: p["seed"])]
        peers = len(paths) - 1 if max_peers is None else min(max_peers, len(paths) - 1)
        for i, path in enumerate(paths):
            index[path] = [paths[(i + k) % len(paths)] for k in range(1, peers + 1)]
    return index


def figure_points(specs: list[dict]) -> list[str]:
    """Points whose distributions a validation figure shows: the lowest seed of each simulator,
    shape and model size (the distances panel covers every point)."""
    first: dict = {}
    for spec in sorted(specs, key=lambda s: s["seed"]):
        key = (spec["experiment"], label(spec), json.dumps(spec["resources"], sort_keys=True), _model_key(spec))
        first.setdefault(key, spec["path"])
    return list(first.values())
