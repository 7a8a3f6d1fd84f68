"""From a validated experiment to its scaling points.

Config -> point spec is the first step of the one data path (config -> spec -> run -> record ->
table -> figures). A spec is a plain dict holding every parameter of one run; its directory
under results/ is readable and stable, so a point can be found, inspected and rerun by path.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import yaml

from snnbench.training import points as training

REPO = Path(__file__).resolve().parents[2]
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RECORD_SCHEMA = REPO / "workflow" / "schemas" / "record.schema.yaml"

# Readable point paths; the Snakemake rules use the same pattern with wildcards.
POINT_DIR = "results/{experiment}/{simulator}/{shape}/{scale}/seed{seed}"
SHAPE = "nodes{nodes}_ranks{ranks_per_node}_threads{threads_per_rank}"
SCALE = "N{neuron_scale}_K{indegree_scale}"


class ConfigError(ValueError):
    """A config that passed the schema but cannot be run; the message names the key."""


def load_schema(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def canonical_hash(obj) -> str:
    """Short stable hash of a JSON-able object (sorted keys)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def fmt_scale(x: float) -> str:
    """A scale as it appears in paths: shortest exact decimal, e.g. 0.1, 0.02, 1."""
    return format(float(f"{x:.10g}"), "g")


def check(config: dict) -> None:
    """Checks the schema cannot express. Raises ConfigError naming the key."""
    names = [e["name"] for e in config["experiments"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"experiments[].name must be unique; repeated: {', '.join(duplicates)}")
    for i, exp in enumerate(config["experiments"]):
        if training.is_training(exp):
            problems = training.check(i, exp)
            if problems:
                raise ConfigError("; ".join(problems))
        seeds = exp["seeds"]
        if len(set(seeds)) != len(seeds):
            raise ConfigError(f"experiments[{i}] ({exp['name']}): seeds must not repeat: {seeds}")
        for key, values in exp.get("resources", {}).items():
            if len(set(values)) != len(values):
                raise ConfigError(f"experiments[{i}] ({exp['name']}): resources.{key} must not repeat: {values}")


def expand_points(experiment: dict) -> list[dict]:
    """All scaling points of one experiment: simulators x resource shapes x seeds.

    Strong scaling keeps the model size fixed. Weak scaling grows the neuron count with the
    number of virtual processes (VPs = nodes x ranks per node x threads per rank):
    neuron_scale = neuron_scale_per_vp x VPs, at a fixed in-degree scale, so neurons and
    synapses per VP stay constant.

    Experiments of the snn-training family expand in snnbench.training.points.
    """
    if training.is_training(experiment):
        return training.expand(experiment)
    res = experiment["resources"]
    model = dict(experiment["pd14"])
    points = []
    for simulator, nodes, ranks, threads, seed in itertools.product(
        experiment["simulators"],
        res["nodes"],
        res["ranks_per_node"],
        res["threads_per_rank"],
        experiment["seeds"],
    ):
        vps = nodes * ranks * threads
        point_model = {k: v for k, v in model.items() if k != "neuron_scale_per_vp"}
        if experiment["scaling"] == "weak":
            point_model["neuron_scale"] = float(f"{model['neuron_scale_per_vp'] * vps:.10g}")
        spec = {
            "experiment": experiment["name"],
            "model_name": experiment["model"],
            "simulator": simulator,
            "scaling": experiment["scaling"],
            "resources": {
                "nodes": nodes,
                "ranks_per_node": ranks,
                "threads_per_rank": threads,
                "ranks": nodes * ranks,
                "virtual_processes": vps,
            },
            "model": point_model,
            "seed": seed,
        }
        add_simulator_fields(spec, experiment)
        spec["path"] = point_dir(spec)
        points.append(spec)
    return points


def add_simulator_fields(spec: dict, experiment: dict) -> None:
    """Fields only some simulators have, added only to their points (other points' specs, and so
    their finished results, stay as they were): GPUs per point, and the Brian2 options."""
    from snnbench.simulators import SIMULATORS

    gpus = SIMULATORS[spec["simulator"]].gpus
    if gpus:
        spec["resources"]["gpus"] = gpus
    if spec["simulator"].startswith("brian2-"):
        spec["simulator_options"] = dict(experiment.get("brian2", {}))


def point_gpus(spec: dict) -> int:
    """GPUs a point needs (0 for CPU simulators)."""
    return int(spec["resources"].get("gpus", 0))


def point_dir(spec: dict) -> str:
    res, model = spec["resources"], spec["model"]
    return POINT_DIR.format(
        experiment=spec["experiment"],
        simulator=spec["simulator"],
        shape=SHAPE.format(**res),
        scale=SCALE.format(
            neuron_scale=fmt_scale(model["neuron_scale"]), indegree_scale=fmt_scale(model["indegree_scale"])
        ),
        seed=spec["seed"],
    )


def all_points(config: dict) -> dict[str, dict]:
    """Every point of every experiment, keyed by its directory."""
    points = {}
    for experiment in config["experiments"]:
        for spec in expand_points(experiment):
            points[spec["path"]] = spec
    return points


def experiment_named(config: dict, name: str) -> dict:
    for experiment in config["experiments"]:
        if experiment["name"] == name:
            return experiment
    raise ConfigError(f"no experiment named {name!r} in the config")


def time_limit_s(config: dict, spec: dict) -> float:
    """A point's wall-clock limit. Read from the config at run time, not stored in the spec:
    raising a limit must not make finished points rerun."""
    return experiment_named(config, spec["experiment"])["time_limit_min"] * 60.0


def estimate_mem_mb(spec: dict) -> int:
    """Memory to request per node (SLURM's --mem) for a point: ~50 bytes per synapse (measured
    for NEST 3 at full scale: 14.9 GB for 2.99e8 synapses) plus ~400 MB per rank for the
    interpreter and kernel, with 50 % headroom, spread evenly over the nodes."""
    from snnbench import pd14

    if spec.get("model_name") == training.MODEL:
        return training.estimate_mem_mb(spec)
    model, res = spec["model"], spec["resources"]
    synapses = pd14.derive(model["neuron_scale"], model["indegree_scale"], model["input"]).total_synapses
    return -(-int(1.5 * (synapses * 50 / 1e6 + 400 * res["ranks"])) // res["nodes"])
