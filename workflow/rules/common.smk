# Shared logic: config validation, the point table and every input/param/resource function.
# Rule files only declare rules.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

sys.path.insert(0, str(Path(workflow.basedir) / "scripts"))

from snnbench import config as snnconfig  # noqa: E402
from snnbench import figures  # noqa: E402
from snnbench import simulators  # noqa: E402
from snnbench import validation  # noqa: E402
from snnbench.training import figures as training_figures  # noqa: E402

validate(config, "../schemas/config.schema.yaml")
try:
    snnconfig.check(config)
except snnconfig.ConfigError as error:
    raise WorkflowError(f"Error in config: {error}")

# Every scaling point of every configured experiment, keyed by its results directory.
POINTS = snnconfig.all_points(config)


def check_environments():
    """Fail before any job starts if a point's simulator environment is missing (e.g. an MPI
    point without MPI-capable NEST); with conda, Snakemake builds the environments itself."""
    if any(m.name.lower() == "conda" for m in workflow.deployment_settings.deployment_method):
        return
    missing = {}
    for path, spec in POINTS.items():
        if spec["model_name"] != "pd14":
            continue  # snn-training points record what they could not run, environments included
        try:
            simulators.python_for(spec)
        except simulators.EnvironmentMissing as error:
            missing.setdefault(str(error), []).append(path)
    if missing:
        lines = [f"{reason}\n  needed by {len(paths)} point(s), e.g. {paths[0]}" for reason, paths in missing.items()]
        raise WorkflowError("Missing environments:\n" + "\n".join(lines))


check_environments()
EXPERIMENTS = [experiment["name"] for experiment in config["experiments"]]
# Figures: per experiment (name -> panels), across tables (comparisons), and archives read beside.
FIGURES = config["figures"]["experiment"]
# snn-training experiments get the training family's own figures (snnbench.training.figures).
TRAINING_FIGURES = list(training_figures.FIGURES)
FIGURE_EXPERIMENTS = config["figures"]["experiments"] or EXPERIMENTS
COMPARISONS = {comparison["name"]: comparison for comparison in config["figures"]["comparisons"]}
ARCHIVES = config["archives"]


def _check_figures():
    for where, panels in [*FIGURES.items(), *((c["name"], c["panels"]) for c in COMPARISONS.values())]:
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
SIMULATORS = sorted({spec["simulator"] for spec in POINTS.values()})
POINT = "results/{experiment}/{simulator}/{shape}/{scale}/seed{seed}"
POINT_LOG = "{experiment}/{simulator}/{shape}/{scale}/seed{seed}"


wildcard_constraints:
    experiment="|".join(EXPERIMENTS),
    simulator="|".join(SIMULATORS),
    shape=r"nodes\d+_ranks\d+_threads\d+",
    scale=r"N[0-9.e+-]+_K[0-9.e+-]+",
    seed=r"\d+",
    figure="|".join([*FIGURES, *TRAINING_FIGURES]) or "^$",
    comparison="|".join(COMPARISONS) or "^$",
    archive="|".join(ARCHIVES) or "^$",


def get_point_spec(wildcards):
    path = POINT.format(**wildcards)
    if path not in POINTS:
        raise WorkflowError(f"{path} is not a point of the configured experiments")
    return POINTS[path]


def get_point_conda_env(wildcards):
    # The simulator's environment; for MPI points its MPI build (envs/<environment>.yaml).
    return simulators.conda_env_file(get_point_spec(wildcards))


def get_point_threads(wildcards):
    return get_point_spec(wildcards)["resources"]["virtual_processes"]


def get_point_shape(key):
    """A resource from the point's shape: nodes, cpus_per_task (threads); tasks: get_point_tasks."""
    field = {"nodes": "nodes", "cpus_per_task": "threads_per_rank"}[key]
    return lambda wildcards: get_point_spec(wildcards)["resources"][field]


def get_point_tasks(per_node):
    """The ranks as SLURM tasks: in all (--ntasks) for one rank per node, else per node
    (--ntasks-per-node). SLURM does not spread --ntasks evenly over --nodes whose cores are not
    all needed, and the executor plugin takes one of the two (tasks_per_node only above 1)."""

    def tasks(wildcards):
        res = get_point_spec(wildcards)["resources"]
        by_node = res["ranks_per_node"] > 1
        if per_node:
            return res["ranks_per_node"] if by_node else None
        return None if by_node else res["ranks"]

    return tasks


def get_point_mpi(wildcards):
    # Marks multi-rank points as MPI jobs for the SLURM executor; the launcher itself is chosen
    # at run time (srun inside a SLURM allocation, mpirun elsewhere).
    return "srun" if get_point_spec(wildcards)["resources"]["ranks"] > 1 else None


def get_point_slurm(key):
    """A site setting (partition, account, constraint, qos): the experiment's, else the config's."""

    def value(wildcards):
        experiment = snnconfig.experiment_named(config, get_point_spec(wildcards)["experiment"])
        return experiment.get("slurm", {}).get(key, config["slurm"].get(key))

    return value


def get_point_gpus(wildcards):
    # GPUs of the point (0 for CPU simulators; brian2-genn and brian2-cuda: 1).
    return snnconfig.point_gpus(get_point_spec(wildcards))


def get_point_mem_mb(wildcards):
    return snnconfig.estimate_mem_mb(get_point_spec(wildcards))


def get_point_runtime_min(wildcards):
    # The scheduler's limit leaves the run's own time limit room to record a time-out.
    return int(snnconfig.time_limit_s(config, get_point_spec(wildcards)) / 60) + 5


def get_statistics_settings(wildcards):
    # Only what changes the statistics: changing a tolerance must not recompute them.
    keys = ("neurons_per_population", "bin_ms", "min_spikes_for_cv")
    return {key: config["validation"][key] for key in keys}


def get_validation_tolerance():
    return {key: config["validation"][key] for key in ("ks_alpha", "ks_margin")}


# Each point's default reference run and its other seeds, indexed once (the DAG asks per point).
# Only PD14 points have spikes to validate; snn-training points have a sanity check of their own.
PD14_SPECS = [spec for spec in POINTS.values() if spec["model_name"] == "pd14"]
REFERENCES = validation.reference_index(
    PD14_SPECS, {e["name"]: e["simulators"] for e in config["experiments"] if e.get("model", "pd14") == "pd14"}
)
SEED_PEERS = validation.seed_peer_index(PD14_SPECS)


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


def get_experiment_validations(wildcards):
    paths = _experiment_points(wildcards.experiment)
    return [f"{path}/validation.json" for path in paths if POINTS[path]["model_name"] == "pd14"]


def get_experiment_benchmarks(wildcards):
    return [
        path.replace("results/", "benchmarks/execute/", 1) + ".tsv" for path in _experiment_points(wildcards.experiment)
    ]


def get_figure_stats(wildcards):
    # Spike statistics that a figure's distribution panels show: one seed per series and shape.
    if wildcards.figure not in FIGURES or not figures.needs_distributions(FIGURES[wildcards.figure]):
        return []
    specs = [POINTS[path] for path in _experiment_points(wildcards.experiment)]
    return [f"{path}/stats.npz" for path in validation.figure_points(specs)]


def get_experiment_summary(wildcards):
    """What was run, in words, for the report's captions."""
    experiment = snnconfig.experiment_named(config, wildcards.experiment)
    specs = [POINTS[path] for path in _experiment_points(wildcards.experiment)]
    if experiment.get("model", "pd14") == "snn-training":
        block = experiment["snn_training"]
        return (
            f"{experiment.get('description', '')} {len(specs)} points: one training step of Linear(n, n) + LIF on "
            f"{', '.join(block['frameworks'])}; n {block['n']}, T {block['T']}, batch {block['batch']}; "
            f"seeds {', '.join(map(str, experiment['seeds']))}."
        ).strip()
    model = experiment["pd14"]
    size = (
        f"neuron scale {model['neuron_scale']:g}"
        if "neuron_scale" in model
        else f"neuron scale {model['neuron_scale_per_vp']:g} per VP"
    )
    shapes = sorted(
        {(s["resources"]["nodes"], s["resources"]["ranks_per_node"], s["resources"]["threads_per_rank"]) for s in specs}
    )
    return (
        f"{experiment.get('description', '')} {len(specs)} points: {experiment['scaling']} scaling of PD14 at {size}, "
        f"in-degree scale {model['indegree_scale']:g}, {model.get('input', 'poisson')} input, "
        f"{model.get('t_sim_ms', 1000):g} ms measured after {model.get('t_presim_ms', 100):g} ms presimulation, "
        f"on {', '.join(experiment['simulators'])}; shapes (nodes x ranks per node x threads per rank) "
        f"{', '.join('x'.join(map(str, shape)) for shape in shapes)}; seeds {', '.join(map(str, experiment['seeds']))}."
    ).strip()


def get_figure_params(wildcards):
    experiment = snnconfig.experiment_named(config, wildcards.experiment)
    if experiment.get("model", "pd14") == "snn-training":
        return {"training": wildcards.figure, "caption": training_figures.FIGURES[wildcards.figure].caption}
    return {"panels": FIGURES[wildcards.figure], "caption": figures.caption(FIGURES[wildcards.figure])}


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
    """Everything of one experiment that an archive packs (tables, specs, records, validation,
    spike statistics, Snakemake's benchmarks; spikes if configured)."""
    paths = _experiment_points(wildcards.experiment)
    kinds = ["spec.json", "record.json"]
    pd14_kinds = ["validation.json", "stats.npz"] + (["spikes.npz"] if config["archive"]["include_spikes"] else [])
    files = [f"results/{wildcards.experiment}/{table}.csv" for table in ("points", "ranks", "validation")]
    files += [f"{path}/{kind}" for path in paths for kind in kinds]
    files += [f"{path}/{kind}" for path in paths if POINTS[path]["model_name"] == "pd14" for kind in pd14_kinds]
    return files + get_experiment_benchmarks(wildcards)


def get_archive_config(wildcards):
    return {
        "experiment": snnconfig.experiment_named(config, wildcards.experiment),
        "activity_check": config["activity_check"],
        "validation": config["validation"],
    }


def get_archive(wildcards):
    return ARCHIVES[wildcards.archive]


def get_final_output():
    outputs = ["results/points.csv"]
    for experiment in config["experiments"]:
        name = experiment["name"]
        outputs += [f"results/{name}/points.csv", f"results/{name}/provenance.html"]
        if experiment.get("model", "pd14") == "snn-training":
            names = TRAINING_FIGURES
        else:
            names = FIGURES if name in FIGURE_EXPERIMENTS else []
        outputs += expand(
            "results/{experiment}/figures/{figure}.{ext}", experiment=name, figure=names, ext=["png", "pdf"]
        )
    outputs += expand("results/comparisons/{comparison}.{ext}", comparison=COMPARISONS, ext=["png", "pdf"])
    if config["regression"]["baseline"]:
        outputs.append("results/regression.csv")
    return outputs


# The snn-training family (workflow/rules/training.smk): its points have their own path pattern.
TRAINING_POINT = "results/{experiment}/{simulator}/{variant}/{size}/seed{seed}"
TRAINING_POINT_LOG = "{experiment}/{simulator}/{variant}/{size}/seed{seed}"


wildcard_constraints:
    variant=r"(cpu|cuda)_[a-z0-9]+_[a-z]+_[a-z]+",
    size=r"n\d+_T\d+_B\d+",


def get_training_spec(wildcards):
    path = TRAINING_POINT.format(**wildcards)
    if path not in POINTS:
        raise WorkflowError(f"{path} is not a point of the configured experiments")
    return POINTS[path]


def get_training_conda_env(wildcards):
    from snnbench.training.execute import environment_for

    return str(Path(workflow.basedir) / "envs" / f"{environment_for(get_training_spec(wildcards))}.yaml")


def get_training_threads(wildcards):
    return get_training_spec(wildcards)["resources"]["threads"]


def get_training_mem_mb(wildcards):
    return snnconfig.estimate_mem_mb(get_training_spec(wildcards))


def get_training_runtime_min(wildcards):
    return int(snnconfig.time_limit_s(config, get_training_spec(wildcards)) / 60) + 5
