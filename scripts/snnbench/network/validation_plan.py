"""Which runs each point's spikes are compared with, chosen from the config alone before
anything ran (the workflow's DAG asks per point, so the indexes are built once): the reference
run, the point's other seeds, and the points whose distributions the figures show."""

from __future__ import annotations

import json

from snnbench.environments.builds import label


def _model_key(spec: dict) -> str:
    return json.dumps(spec["model"], sort_keys=True)


def _order(simulators: list[str]):
    def key(p):
        res = p["resources"]
        return (simulators.index(label(p)), res["virtual_processes"], res["nodes"], res["ranks"], p["seed"])

    return key


def reference_index(points: list[dict], simulators: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The run each point is compared with by default (point path -> reference path): of the
    same experiment's points of the same model (size, input, durations), the first simulator
    listed, the fewest virtual processes (then nodes, ranks), the lowest seed. Chosen from the
    config alone, before anything ran. simulators: experiment name -> its simulators in order
    (default: in the order the points list them, as expansion does)."""
    if simulators is None:
        simulators = {}
        for p in points:
            order = simulators.setdefault(p["experiment"], [])
            if label(p) not in order:
                order.append(label(p))
    groups: dict = {}
    for p in points:
        groups.setdefault((p["experiment"], _model_key(p)), []).append(p)
    index = {}
    for (experiment, _), members in groups.items():
        reference = min(members, key=_order(simulators[experiment]))["path"]
        index.update({p["path"]: reference for p in members})
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
