"""From a validated config to its points: the first step of the one data path
(config -> spec -> run -> record -> table -> figures).

A spec is a plain dict holding every parameter of one run; its directory under results/ is
readable and stable, so a point can be found, inspected and rerun by path. Each experiment's
family (snnbench.families) expands it.
"""

from __future__ import annotations

from snnbench import families, paths
from snnbench.planning import slurm_request


class ConfigError(ValueError):
    """A question about the config that it cannot answer (an experiment it does not name)."""


def problems(config: dict) -> list[str]:
    """What the schema cannot express, one line per problem naming the key (config: checked against
    the schema, defaults filled in)."""
    found = []
    names = [e["name"] for e in config["experiments"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        found.append(f"experiments[].name must be unique; repeated: {', '.join(duplicates)}")
    for i, exp in enumerate(config["experiments"]):
        if exp["name"] in paths.OWN_FOLDERS:  # results/<name> is a folder snnbench writes for itself
            found.append(
                f"experiments[{i}] ({exp['name']}): name {exp['name']!r} is a folder snnbench itself writes under "
                f"{paths.RESULTS}/; not one of: {', '.join(sorted(paths.OWN_FOLDERS))}"
            )
        found += families.of_experiment(exp).check(i, exp)
        seeds = exp["seeds"]
        if len(set(seeds)) != len(seeds):
            found.append(f"experiments[{i}] ({exp['name']}): seeds must not repeat: {seeds}")
        for key, values in exp.get("resources", {}).items():
            if len(set(values)) != len(values):
                found.append(f"experiments[{i}] ({exp['name']}): resources.{key} must not repeat: {values}")
    return found + slurm_request.problems(config)


def add_shared(config: dict, experiments: dict, family: dict) -> dict[str, tuple[str, int]]:
    """Add the experiments the configured ones share (snnbench.run.family.Family.shared_experiment) to
    `experiments`, `family` and the config's list (time limits and build labels are read there), once each:
    two that derive one name share its points, its seeds the union of theirs. Returns experiment ->
    (the shared one, the seeds it asks for)."""
    shared = {}
    for name in list(experiments):
        derived = family[name].shared_experiment(experiments[name])
        if derived is None:
            continue
        known = experiments.get(derived["name"])
        if known is None:
            experiments[derived["name"]] = known = derived
            config["experiments"].append(derived)
            family[derived["name"]] = family[name]
        known["seeds"] = sorted(set(known["seeds"]) | set(derived["seeds"]))
        shared[name] = (derived["name"], len(derived["seeds"]))
    return shared


def inherit_site_defaults(config: dict) -> None:
    """Each experiment that leaves out a key of its family's site_defaults takes the config's
    top-level value (defaults filled in): e.g. `binding`, a site's default that an experiment overrides."""
    for experiment in config["experiments"]:
        for key in families.of_experiment(experiment).site_defaults:
            experiment.setdefault(key, config[key])


def expand_points(experiment: dict) -> list[dict]:
    """All points of one experiment, expanded by its family."""
    return families.of_experiment(experiment).expand(experiment)


def experiment_named(config: dict, name: str) -> dict:
    for experiment in config["experiments"]:
        if experiment["name"] == name:
            return experiment
    raise ConfigError(f"no experiment named {name!r} in the config")


def time_limit_s(config: dict, spec: dict) -> float:
    """A point's wall-clock limit. Read from the config at run time, not stored in the spec:
    raising a limit must not make finished points rerun."""
    return experiment_named(config, spec["experiment"])["time_limit_min"] * 60.0


def build_labels(config: dict, key: str) -> list[str]:
    """The uses of the environment with this key in a config's experiments, e.g.
    `nest@nest-3.9 (experiment nest-builds)`: how a failed build names itself."""
    return sorted(
        f"{label} (experiment {experiment['name']})"
        for experiment in config["experiments"]
        for label, build in families.of_experiment(experiment).builds(experiment)
        if build["key"] == key
    )
