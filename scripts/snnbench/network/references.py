"""Which runs each point's spikes are compared with, chosen from the config alone before
anything ran (the workflow's DAG asks per point, so the indexes are built once): the reference
simulator (one per experiment, for validation, rate agreement, the spike match and the figures), the
reference run and ensemble, the point's other seeds, and the points whose distributions the figures show.

An experiment's reference ensemble is, by default, its own reference simulator's seeds. With
`validation.seeds: N` it is a shared one (ensemble_experiment): an experiment of its own, named by its
content (results/ensemble-<model>-<digest>/), holding the reference simulator's seeds 1..N of the unchanged
model at the experiment's first shape. Every experiment of any config that asks for the same reference,
model, size, input, durations and shape derives the same name, so the ensemble is run once and found by all.
"""

from __future__ import annotations

import json

from snnbench.environments.builds import label
from snnbench.hashing import canonical_hash

ENSEMBLE_PREFIX = "ensemble-"  # the shared ensembles' experiment names: ensemble-<model>-<digest>
CHANGES = ("perturbation",)  # model keys a reference ensemble leaves out: it is of the model as published
ENSEMBLE_DESCRIPTION = (
    "Reference ensemble: the reference simulator's seeds of the model at one shape, shared by every experiment that "
    "asks for it (validation.seeds)."
)


def _model_key(spec: dict, drop: tuple[str, ...] = ()) -> str:
    return json.dumps({k: v for k, v in spec["model"].items() if k not in drop}, sort_keys=True)


def run_key(spec: dict) -> str:
    """What makes two points one run, wherever they are stored: the spec without its experiment and path."""
    return json.dumps({k: v for k, v in spec.items() if k not in ("experiment", "path")}, sort_keys=True)


def _shape_order(spec: dict):
    res = spec["resources"]
    return (res["virtual_processes"], res["nodes"], res["ranks"], spec["seed"])


# The shape a shared ensemble runs at unless the experiment's validation.shape names another: the model as its
# reference implementations run it, one rank of one thread (never silently the experiment's own shape).
REFERENCE_SHAPE = {"nodes": 1, "ranks_per_node": 1, "threads_per_rank": 1}


def ensemble_experiment(experiment: dict, model_name: str, reference: str, expand) -> dict | None:
    """The shared reference ensemble `validation.seeds: N` asks for, as an experiment (None without it):
    the reference simulator's seeds 1..N at validation.shape (default REFERENCE_SHAPE), of the model without
    its changes (CHANGES), named ensemble-<model>-<digest of its points' spec>. expand: the family's
    (experiment -> specs)."""
    validation = experiment.get("validation", {})
    wanted = validation.get("seeds")
    if not wanted:
        return None
    shape = {key: [value] for key, value in {**REFERENCE_SHAPE, **validation.get("shape", {})}.items()}
    shared = {k: v for k, v in experiment.items() if k not in ("race", "description")}
    shared.update(
        simulators=[reference],
        resources={**experiment["resources"], **shape},
        seeds=list(range(1, wanted + 1)),
        validation={"reference": reference},
    )
    shared[model_name] = {k: v for k, v in experiment[model_name].items() if k not in CHANGES}
    one = expand({**shared, "name": ENSEMBLE_PREFIX, "seeds": [1]})[0]
    digest = canonical_hash({k: v for k, v in one.items() if k not in ("experiment", "path", "seed")})[:10]
    shared["name"] = f"{ENSEMBLE_PREFIX}{model_name}-{digest}"
    shared["description"] = ENSEMBLE_DESCRIPTION
    return shared


def configured(experiments: list) -> list:
    """A config's experiments without the shared ensembles that planning added to it (a config planned before,
    in this process); an experiment a user named with the prefix stays, to be refused by its family's check."""
    return [
        e
        for e in experiments
        if not (
            isinstance(e, dict)
            and str(e.get("name")).startswith(ENSEMBLE_PREFIX)
            and e.get("description") == ENSEMBLE_DESCRIPTION
        )
    ]


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
    points: list[dict],
    simulators: dict[str, list[str]] | None = None,
    references: dict[str, str] | None = None,
    shared: dict[str, tuple[str, int]] | None = None,
) -> dict[str, list[str]]:
    """The reference ensemble of each point (point path -> paths, the reference run first): the
    reference run's seeds, that is the same experiment's points of the reference simulator, shape and
    model, in seed order. shared: experiment -> (its shared ensemble's experiment, seeds wanted): the
    points of the unchanged model take that ensemble's seeds 1..N instead, less the member that is
    the point's own run; a member the experiment runs itself (same simulator, shape, model and seed) is
    read from the experiment's folder, so that collect reads that run once."""
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
    for experiment, (name, wanted) in (shared or {}).items():
        members = sorted((p for p in points if p["experiment"] == name and p["seed"] <= wanted), key=_shape_order)
        if not members:
            continue
        members = [m for m in members if label(m) == label(members[0])]  # one build of the reference
        model = _model_key(members[0])
        mine = [p for p in points if p["experiment"] == experiment]
        own = {run_key(p): p["path"] for p in mine}
        for p in mine:
            if _model_key(p, CHANGES) == model:
                index[p["path"]] = [own.get(run_key(m), m["path"]) for m in members if run_key(m) != run_key(p)]
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
