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
SIMULATORS = sorted({spec["simulator"] for spec in POINTS.values()})
POINT = "results/{experiment}/{simulator}/{shape}/{scale}/seed{seed}"
POINT_LOG = "{experiment}/{simulator}/{shape}/{scale}/seed{seed}"


wildcard_constraints:
    experiment="|".join(EXPERIMENTS),
    simulator="|".join(SIMULATORS),
    shape=r"nodes\d+_ranks\d+_threads\d+",
    scale=r"N[0-9.e+-]+_K[0-9.e+-]+",
    seed=r"\d+",
    figure="|".join([*figures.FIGURES, *figures.TRAINING_FIGURES]),


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
    """A resource from the point's shape: nodes, tasks (MPI ranks), cpus_per_task (threads)."""
    field = {"nodes": "nodes", "tasks": "ranks", "cpus_per_task": "threads_per_rank"}[key]
    return lambda wildcards: get_point_spec(wildcards)["resources"][field]


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


def _experiment_points(experiment):
    return [path for path, spec in POINTS.items() if spec["experiment"] == experiment]


def get_experiment_records(wildcards):
    return [f"{path}/record.json" for path in _experiment_points(wildcards.experiment)]


def get_experiment_benchmarks(wildcards):
    return [
        path.replace("results/", "benchmarks/execute/", 1) + ".tsv" for path in _experiment_points(wildcards.experiment)
    ]


def get_final_output():
    outputs = ["results/points.csv"]
    for experiment in config["experiments"]:
        outputs.append(f"results/{experiment['name']}/points.csv")
        outputs += expand(
            "results/{experiment}/figures/{figure}.{ext}",
            experiment=experiment["name"],
            figure=figures.names_for(experiment.get("model", "pd14")),
            ext=["png", "pdf"],
        )
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
