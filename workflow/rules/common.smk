# Shared logic: config validation, the point table and every input/param/resource function.
# Rule files only declare rules. Nothing here names a benchmark family: each experiment's family
# (snnbench.families) expands it into points and answers for them.
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate

from snnbench import build_env, builds, environments
from snnbench import config as snnconfig
from snnbench import config_check, families, figures, jsonfile, paths, third_party, unfinished
from snnbench.network import validation_plan

# Refused before any job, in a few lines naming the file, the key and what is allowed.
CONFIG_FILES = ", ".join(map(str, workflow.configfiles)) or "no config file"
_problems = config_check.schema_problems(config)
if _problems:
    raise WorkflowError(f"Error in config ({CONFIG_FILES}):\n  " + "\n  ".join(_problems))
validate(config, "../schemas/config.schema.yaml")  # fills in the schema's defaults
try:
    snnconfig.check(config)
except snnconfig.ConfigError as error:
    raise WorkflowError(f"Error in config ({CONFIG_FILES}): {error}")
third_party.use_config(config)  # where the environments' builds find source archives

# Every point of every configured experiment, keyed by its results directory.
POINTS = snnconfig.all_points(config)
EXPERIMENTS = {experiment["name"]: experiment for experiment in config["experiments"]}
FAMILY = {name: families.of_experiment(experiment) for name, experiment in EXPERIMENTS.items()}
USED_FAMILIES = {family.name: family for family in FAMILY.values()}


def family_of_point(path):
    return FAMILY[POINTS[path]["experiment"]]


# With conda, Snakemake makes the points' environments itself; else rules build_environment and
# link_environment make those beside the workflow's own (.venv).
USES_CONDA = any(m.name.lower() == "conda" for m in workflow.deployment_settings.deployment_method)


def check_environments():
    """Fail before any job starts if a point cannot start here and its family says that must stop
    the workflow (e.g. an MPI point of a simulator without MPI)."""
    if USES_CONDA:
        return
    missing = {}
    for path, spec in POINTS.items():
        reason = family_of_point(path).missing_environment(spec)
        if reason:
            missing.setdefault(reason, []).append(path)
    if missing:
        lines = [f"{reason}\n  needed by {len(paths)} point(s), e.g. {paths[0]}" for reason, paths in missing.items()]
        raise WorkflowError("Missing environments:\n" + "\n".join(lines))


check_environments()
# A record cut short (full disk, killed copy) would stop every table of its experiment: set it
# aside and drop its experiment's (derived) table, so that Snakemake reruns the point and remakes the
# tables (a missing intermediate file alone does not make it rerun anything), and say so.
# (workflow.dryrun is not yet known while the Snakefile is read; the output settings are.)
DRY_RUN = bool(workflow.output_settings and workflow.output_settings.dryrun)
for _path, _line in jsonfile.set_aside_damaged([f"{path}/record.json" for path in POINTS], DRY_RUN):
    logger.warning(_line)
    if not DRY_RUN:
        Path(f"results/{POINTS[str(Path(_path).parent)]['experiment']}/points.csv").unlink(missing_ok=True)


def check_writable():
    """Fail before any job if a point still to be run cannot write its folder, log or benchmark:
    its job would fail after the others ran, and its experiment's tables would wait for it."""
    blocked = {}
    for path in POINTS:
        family = family_of_point(path)
        if all(Path(path, name).exists() for name in (*family.outputs, *family.collected)):
            continue
        for folder in (path, Path(paths.point_log(path)).parent, Path(paths.point_benchmark(path)).parent):
            where = paths.unwritable(str(folder))
            if where:
                blocked.setdefault(where, []).append(path)
    if blocked:
        lines = [
            f"  {where}" + (f" (needed by {len(ps)} point(s), e.g. {ps[0]})" if ps != [where] else "")
            for where, ps in blocked.items()
        ]
        raise WorkflowError(
            "Cannot write where points of this run write (permissions, an immutable flag, a read-only file system "
            "or a file in the way):\n" + "\n".join(lines) + "\nMake it writable, or leave its experiment out of the "
            "config; nothing was run."
        )


check_writable()
# Figures: per experiment (its family's: name -> panels), across tables (comparisons), archives read beside.
FIGURE_EXPERIMENTS = config["figures"]["experiments"] or list(EXPERIMENTS)
FIGURES = {name: (FAMILY[name].figures(config) if name in FIGURE_EXPERIMENTS else {}) for name in EXPERIMENTS}
COMPARISONS = {comparison["name"]: comparison for comparison in config["figures"]["comparisons"]}
ARCHIVES = config["archives"]


def _check_figures():
    named = [*config["figures"]["experiment"].items(), *((c["name"], c["panels"]) for c in COMPARISONS.values())]
    named += [(figure, panels) for experiment in FIGURES.values() for figure, panels in experiment.items()]
    for where, panels in named:
        unknown = [p for p in panels if p not in figures.PANELS]
        if unknown:
            raise WorkflowError(
                f"Error in config: figure {where!r} names unknown panels {unknown}; known: {', '.join(figures.PANELS)}"
            )
    for name in FIGURE_EXPERIMENTS:
        if name not in EXPERIMENTS:
            raise WorkflowError(f"Error in config: figures.experiments names {name!r}, not a configured experiment")
    for comparison in COMPARISONS.values():
        for entry in comparison["tables"]:
            source, _, experiment = entry.rpartition("/")
            if (source and source not in ARCHIVES) or (not source and experiment not in EXPERIMENTS):
                raise WorkflowError(
                    f"Error in config: comparison {comparison['name']!r} names table {entry!r}: neither an experiment "
                    "nor '<archive>/<experiment>' with an archive from `archives`"
                )


_check_figures()
POINT = paths.POINT
POINT_LOG = "{experiment}/{point}"


wildcard_constraints:
    experiment="|".join(EXPERIMENTS),
    point="|".join(f"(?:{family.point_regex_str()})" for family in USED_FAMILIES.values()),
    figure="|".join({figure for experiment in FIGURES.values() for figure in experiment}) or "^$",
    comparison="|".join(COMPARISONS) or "^$",
    archive="|".join(ARCHIVES) or "^$",
    key=builds.KEY_PATTERN,


def get_point_spec(wildcards):
    path = paths.point_path(wildcards.experiment, wildcards.point)
    if path not in POINTS:
        raise WorkflowError(f"{path} is not a point of the configured experiments")
    return POINTS[path]


def family_experiments(family):
    """The experiments of one family (the execute rule of that family matches only them)."""
    return "|".join(name for name, of in FAMILY.items() if of is family)


def family_outputs(family):
    return {Path(name).stem: f"{POINT}/{name}" for name in family.outputs}


# Environments the workflow makes, once per machine in the per-user cache (snnbench.builds,
# snnbench.environments): key -> what defines it and the experiments whose points need it. Simulator
# builds, and the named environments (envs/<name>.yaml) of points that do not run in .venv; each
# checkout then links the named ones as .venv-<name> (rule link_environment).
BUILDS = {}


def _needs_environment(key, content, experiment):
    made = BUILDS.setdefault(key, {"content": content, "experiments": []})
    if experiment not in made["experiments"]:
        made["experiments"].append(experiment)


for _name, _experiment in EXPERIMENTS.items():
    for _label, _build in FAMILY[_name].builds(_experiment):
        _needs_environment(_build["key"], builds.content(_build), _name)


def point_environment(spec):
    """The named environment a point runs in, if the workflow makes it (None: .venv, conda, a build)."""
    family = FAMILY[spec["experiment"]]
    environment = family.environment(spec)
    made = family.workflow_makes_environment(spec) and environment not in environments.MAIN
    return environment if made and not USES_CONDA and "build" not in spec else None


# Each named environment's definition is read once per experiment that needs it, not once per point.
for _environment, _name in dict.fromkeys((point_environment(s), s["experiment"]) for s in POINTS.values()):
    if _environment:
        _needs_environment(environments.key(_environment), build_env.named_build(_environment), _name)


def get_point_environment(wildcards):
    """This checkout's link of the point's environment (its build's, or a named one's), made after
    the cached environment (ancient: an environment remade or relinked must not make finished
    points rerun)."""
    spec = get_point_spec(wildcards)
    environment = builds.linked_name(spec["build"]) if "build" in spec else point_environment(spec)
    return [ancient(str(environments.link_marker(environment)))] if environment else []


def get_linked_key(wildcards):
    """The key of the cached environment a checkout's .venv-<environment> stands on: a param, so
    that an edited envs file links anew (without making finished points rerun)."""
    return builds.linked_key(wildcards.environment) or environments.key(wildcards.environment)


def get_linked_environment(wildcards):
    return ancient(str(environments.made_marker(get_linked_key(wildcards))))


def get_build(wildcards):
    # Only what defines the environment (its key): a param that changed with the names or experiments
    # using it would make Snakemake remake a shared environment.
    return BUILDS[wildcards.key]["content"]


def get_build_slurm(key):
    """A site setting for a build's job: its first experiment's, else the config's."""

    def value(wildcards):
        experiment = EXPERIMENTS[BUILDS[wildcards.key]["experiments"][0]]
        return experiment.get("slurm", {}).get(key, config["slurm"].get(key))

    return value


def get_point_conda_env(wildcards):
    spec = get_point_spec(wildcards)
    return str(paths.ENVS / f"{FAMILY[spec['experiment']].environment(spec)}.yaml")


_RESOURCES = {}


def get_point_resource(key):
    """A resource of the point from its family: threads, mem_mb, nodes, tasks (MPI ranks in all) or
    tasks_per_node, cpus_per_task (threads per rank), mpi, gpu."""

    def value(wildcards):
        spec = get_point_spec(wildcards)
        if spec["path"] not in _RESOURCES:
            _RESOURCES[spec["path"]] = FAMILY[spec["experiment"]].resources(spec, config)
        return _RESOURCES[spec["path"]][key]

    return value


def get_point_runtime_min(wildcards):
    # The scheduler's limit leaves the run's own time limit room to record a time-out.
    return int(snnconfig.time_limit_s(config, get_point_spec(wildcards)) / 60) + 5


def get_point_slurm(key):
    """A site setting (partition, account, constraint, qos): the experiment's, else the config's."""

    def value(wildcards):
        experiment = EXPERIMENTS[wildcards.experiment]
        return experiment.get("slurm", {}).get(key, config["slurm"].get(key))

    return value


def get_statistics_settings(wildcards):
    # Only what changes the statistics: changing a tolerance must not recompute them.
    keys = ("neurons_per_population", "bin_ms", "min_spikes_for_cv")
    return {key: config["validation"][key] for key in keys}


def get_validation_tolerance():
    return {key: config["validation"][key] for key in ("ks_alpha", "ks_margin")}


# Each validated point's default reference run and its other seeds, indexed once (the DAG asks
# per point). Validated points are those whose family collects validate_point's result.
VALIDATED = [spec for path, spec in POINTS.items() if "validation.json" in family_of_point(path).collected]
REFERENCES = validation_plan.reference_index(VALIDATED)
SEED_PEERS = validation_plan.seed_peer_index(VALIDATED, config["validation"]["seed_peers"])


def get_reference_stats(wildcards):
    spec = get_point_spec(wildcards)
    external = config["validation"]["references"].get(spec["experiment"])
    return external or f"{REFERENCES[spec['path']]}/stats.npz"


def get_seed_stats(wildcards):
    return [f"{peer}/stats.npz" for peer in SEED_PEERS[get_point_spec(wildcards)["path"]]]


def _experiment_points(experiment):
    return [path for path, spec in POINTS.items() if spec["experiment"] == experiment]


def get_experiment_records(wildcards):
    return [f"{path}/record.json" for path in _experiment_points(wildcards.experiment)]


def get_experiment_collected(wildcards):
    """Files of the experiment's points that collect reads beside their records (the family's)."""
    names = FAMILY[wildcards.experiment].collected
    return [f"{path}/{name}" for path in _experiment_points(wildcards.experiment) for name in names]


def get_experiment_benchmarks(wildcards):
    return [paths.point_benchmark(path) for path in _experiment_points(wildcards.experiment)]


def get_figure_stats(wildcards):
    # Spike statistics that a figure's distribution panels show: one seed per series and shape.
    panels = FIGURES[wildcards.experiment].get(wildcards.figure, [])
    if not figures.needs_distributions(panels):
        return []
    specs = [POINTS[path] for path in _experiment_points(wildcards.experiment)]
    return [f"{path}/stats.npz" for path in validation_plan.figure_points(specs)]


def get_experiment_summary(wildcards):
    """What was run, in words, for the report's captions."""
    specs = [POINTS[path] for path in _experiment_points(wildcards.experiment)]
    return FAMILY[wildcards.experiment].summary(EXPERIMENTS[wildcards.experiment], specs)


def get_figure_params(wildcards):
    panels = FIGURES[wildcards.experiment][wildcards.figure]
    series = FAMILY[wildcards.experiment].series_of(EXPERIMENTS[wildcards.experiment])
    return {"panels": panels, "series": series, "caption": figures.caption(panels)}


def _table_path(entry):
    source, _, experiment = entry.rpartition("/")
    return f"results/imported/{source}/points.csv" if source else f"results/{experiment}/points.csv"


def get_comparison_tables(wildcards):
    return [_table_path(entry) for entry in COMPARISONS[wildcards.comparison]["tables"]]


def get_comparison_params(wildcards):
    comparison = COMPARISONS[wildcards.comparison]
    return {
        "panels": comparison["panels"],
        "tables": comparison["tables"],
        "caption": figures.caption(comparison["panels"]),
        "description": comparison.get("description", ""),
    }


def get_archive_files(wildcards):
    """Everything of one experiment that an archive packs: tables, each point's files that its
    family archives (spec, record, validation, spike statistics; spikes if configured), and
    Snakemake's benchmarks."""
    kinds = FAMILY[wildcards.experiment].archived(config)
    files = [f"results/{wildcards.experiment}/{table}.csv" for table in ("points", "ranks", "validation")]
    files += [f"{path}/{kind}" for path in _experiment_points(wildcards.experiment) for kind in kinds]
    return files + get_experiment_benchmarks(wildcards)


def get_archive_config(wildcards):
    return {
        "experiment": EXPERIMENTS[wildcards.experiment],
        "activity_check": config["activity_check"],
        "validation": config["validation"],
    }


def get_archive(wildcards):
    return ARCHIVES[wildcards.archive]


# Community-race performance experiments (`race.recipe: performance`) get their standings (rule race_standings).
RACE = {name: e["race"] for name, e in EXPERIMENTS.items() if e.get("race", {}).get("recipe") == "performance"}


def get_race_accuracy_table(wildcards):
    """The points table of the accuracy experiment linked to a performance one, if in this config."""
    linked = RACE[wildcards.experiment].get("accuracy_experiment")
    return [f"results/{linked}/points.csv"] if linked in EXPERIMENTS else []


# Experiments with several builds get the regression view between them: the first build named is
# the baseline of the others (rule compare_builds; `make compare-builds` for any two).
BUILD_COMPARISONS = {name: list(e["builds"]) for name, e in EXPERIMENTS.items() if len(e.get("builds") or {}) > 1}


def get_compared_builds(wildcards):
    return BUILD_COMPARISONS[wildcards.experiment]


def get_final_output():
    outputs = ["results/points.csv"]
    for name in EXPERIMENTS:
        outputs += [f"results/{name}/points.csv", f"results/{name}/provenance.html"]
        outputs += expand(
            "results/{experiment}/figures/{figure}.{ext}", experiment=name, figure=FIGURES[name], ext=["png", "pdf"]
        )
    outputs += expand("results/{experiment}/race/standings.{ext}", experiment=RACE, ext=["csv", "md", "png", "pdf"])
    outputs += expand("results/comparisons/{comparison}.{ext}", comparison=COMPARISONS, ext=["png", "pdf"])
    outputs += expand("results/{experiment}/builds.csv", experiment=BUILD_COMPARISONS)
    outputs += expand("results/{experiment}/figures/builds.{ext}", experiment=BUILD_COMPARISONS, ext=["png", "pdf"])
    if config["regression"]["baseline"]:
        outputs.append("results/regression.csv")
    return outputs


def write_unfinished_tables():
    """After a run with failed jobs (onerror): the tables of experiments whose points all have a
    record, from the records on disk (snnbench.unfinished), so that a point SLURM ended shows."""
    experiment_points = {name: _experiment_points(name) for name in EXPERIMENTS}
    tolerance = get_validation_tolerance()
    for line in unfinished.write_tables(experiment_points, config["activity_check"], tolerance):
        logger.warning(line)
