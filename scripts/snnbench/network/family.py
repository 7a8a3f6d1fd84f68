"""The network family: one network model (snnbench.network.models) on spiking network simulators.

One family object per model, named as the model (an experiment's `model`, a point's `model_name`).
A point is one simulator x resource shape x model size x seed, run by snnbench.network.execute in the
simulator's environment (an MPI job for several ranks). Its spikes are validated against a
reference run (rules point_statistics, validate_point), so collect reads validation.json too.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

from snnbench import environments, paths
from snnbench.environments import builds
from snnbench.machine import affinity
from snnbench.network import binding, execute, models, race, references, rows
from snnbench.network import simulators as simulator_registry
from snnbench.network.simulators import EnvironmentMissing, environment_for
from snnbench.records import inputs
from snnbench.run.family import Family


def fmt_scale(x: float) -> str:
    """A scale as it appears in paths: shortest exact decimal, e.g. 0.1, 0.02, 1."""
    return format(float(f"{x:.10g}"), "g")


class Network(Family):
    point_pattern = (
        "{simulator}/nodes{nodes}_ranks{ranks_per_node}_threads{threads_per_rank}/"
        "N{neuron_scale}_K{indegree_scale}/seed{seed}"
    )
    point_regex = {
        # The simulator, and its build where the experiment names builds (snnbench.environments.builds.label).
        "simulator": f"(?:{'|'.join(simulator_registry.registered())})(?:@[A-Za-z0-9][A-Za-z0-9_.-]*)?",
        "nodes": r"\d+",
        "ranks_per_node": r"\d+",
        "threads_per_rank": r"\d+",
        "neuron_scale": r"[0-9.e+-]+",
        "indegree_scale": r"[0-9.e+-]+",
        "seed": r"\d+",
    }
    outputs = ("record.json", "spikes.npz")
    collected = ("validation.json",)
    statistics = ("stats.npz",)  # rule point_statistics's, read by validate_point and the figures
    series = "simulator"
    sort_keys = ("experiment", "simulator", "vps", "seed")
    site_defaults = ("binding",)
    slurm_exclusive = True  # no other job shares the cores, caches and memory bandwidth measured (beNNch too)

    # What collect reads of a point's validation result (network.rows.finish_table).
    VALIDATION_KEYS = ("checked", "rows")

    def output_problem(self, name: str, path: Path) -> str | None:  # arrays that execute writes, validation reads
        return inputs.npz_problem(path, {"spikes.npz": ("senders", "times_ms"), "stats.npz": ("meta",)}.get(name, ()))

    def collected_problem(self, name: str, content) -> str | None:
        if not isinstance(content, dict):
            return "not a JSON object"
        missing = [key for key in self.VALIDATION_KEYS if key not in content]
        return f"no {', '.join(missing)}" if missing else None

    def __init__(self, model: str):
        self.name = model
        self.model = models.get(model)

    def check(self, index: int, experiment: dict) -> list[str]:
        """What the schema cannot say: repeated simulators, model times off the 0.1 ms grid, and
        model sizes so small that a population has no neuron (it would fail inside the simulator)."""
        where = f"experiments[{index}] ({experiment['name']})"
        packages = {name: s.build_package for name, s in simulator_registry.registered().items()}
        problems = builds.check(where, experiment, packages)
        if problems:
            return problems  # points cannot be expanded without their builds
        simulators = experiment["simulators"]
        if len(set(simulators)) != len(simulators):
            problems.append(f"{where}: simulators must not repeat: {simulators}")
        if experiment["name"].startswith(references.ENSEMBLE_PREFIX):
            problems.append(
                f"{where}: names starting {references.ENSEMBLE_PREFIX!r} are the shared reference ensembles' "
                "(validation.seeds): choose another name"
            )
        validation = experiment.get("validation", {})
        runs_on = simulator_registry.simulators_of(self.name)
        if validation.get("reference") not in (None, *runs_on):
            problems.append(
                f"{where}: validation.reference {validation['reference']!r} does not run model {self.name}: "
                f"allowed are {', '.join(runs_on)}"
            )
        elif validation.get("reference") not in (None, *simulators) and not validation.get("seeds"):
            problems.append(
                f"{where}: validation.reference {validation['reference']!r} is not among its simulators "
                f"({', '.join(simulators)}): list it, or set validation.seeds to use a shared ensemble of its seeds"
            )
        unbuilt = [s for s in simulators if simulator_registry.builder(s, self.name) is None]
        if unbuilt:
            problems.append(
                f"{where}: model {self.name} has no builder for simulators {', '.join(unbuilt)} "
                f"(it runs on {', '.join(simulator_registry.simulators_of(self.name))})"
            )
            return problems
        model, dt_ms = experiment[self.name], self.model.dt_ms
        for key in ("t_sim_ms", "t_presim_ms"):
            steps = model.get(key, 0) / dt_ms  # infinite for a length too long to count in steps
            if not math.isfinite(steps) or abs(steps - round(steps)) > 1e-9:
                problems.append(
                    f"{where}: {self.name}.{key} = {model[key]:g} is not a multiple of the resolution {dt_ms} ms"
                )
        problems += simulator_registry.option_problems(where, experiment)
        if "race" in experiment and self.model.race is None:
            raced = [name for name in models.names() if models.get(name).race]
            problems.append(
                f"{where}: race: model {self.name} has no community race (a race recipe and living table); "
                f"models with one: {', '.join(raced)}"
            )
            return problems
        race = experiment.get("race", {})
        if race.get("recipe") == "performance" and model.get("record_spikes", True):
            problems.append(f"{where}: race.recipe performance records no spikes: set {self.name}.record_spikes: false")
        if race.get("accuracy_experiment") and race.get("recipe") != "performance":
            problems.append(f"{where}: race.accuracy_experiment is for performance experiments only")
        # Each shape's model once: the seeds do not change it (a campaign of many seeds checks in no more time).
        one_seed = self.expand({**experiment, "seeds": experiment["seeds"][:1]})
        problems += _environment_problems(where, one_seed)
        return problems + self.model.check(where, experiment, [spec["model"] for spec in one_seed])

    def expand(self, experiment: dict) -> list[dict]:
        """simulators x resource shapes x seeds. Strong scaling keeps the model size fixed; weak
        scaling grows the neuron count with the virtual processes (VPs = nodes x ranks per node x
        threads per rank): neuron_scale = neuron_scale_per_vp x VPs at a fixed in-degree scale, so
        neurons and synapses per VP stay constant."""
        res, model = experiment["resources"], dict(experiment[self.name])
        points = []
        grid = (res["nodes"], res["ranks_per_node"], res["threads_per_rank"], experiment["seeds"])
        for (simulator, build), (nodes, ranks, threads, seed) in itertools.product(
            _simulator_builds(experiment), itertools.product(*grid)
        ):
            vps = nodes * ranks * threads
            point_model = {k: v for k, v in model.items() if k != "neuron_scale_per_vp"}
            if experiment["scaling"] == "weak":
                point_model["neuron_scale"] = float(f"{model['neuron_scale_per_vp'] * vps:.10g}")
            spec = {
                "experiment": experiment["name"],
                "model_name": self.name,
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
            if build:  # only points of builds (others' specs, and so their finished results, stay as they were)
                spec["build"] = build
            if experiment.get("binding", binding.NONE) != binding.NONE:  # likewise: unbound points as they were
                spec["binding"] = experiment["binding"]
            _add_simulator_fields(spec, experiment)
            if "race" in experiment:  # only race experiments' specs (others' finished points stay as they were)
                spec["race"] = race.spec_fields(experiment)
            spec["path"] = self.point_dir(spec)
            points.append(spec)
        return points

    def validation_reference(self, experiment: dict) -> str:
        """The simulator this experiment's points are validated and compared against (snnbench.network.references)."""
        return references.reference_simulator(experiment, self.model.reference_simulator)

    def shared_experiment(self, experiment: dict) -> dict | None:
        """The reference ensemble asked for by `validation.seeds` (snnbench.network.references.ensemble_experiment):
        the reference simulator's seeds 1..N of the unchanged model at the experiment's first shape."""
        reference = self.validation_reference(experiment)
        return references.ensemble_experiment(experiment, self.name, reference, self.expand)

    def point_fields(self, spec: dict) -> dict:
        model = spec["model"]
        return {
            **spec["resources"],
            "simulator": builds.label(spec),
            "neuron_scale": fmt_scale(model["neuron_scale"]),
            "indegree_scale": fmt_scale(model["indegree_scale"]),
            "seed": spec["seed"],
        }

    def builds(self, experiment: dict) -> list[tuple[str, dict]]:
        return [(f"{simulator}@{b['name']}", b) for simulator, b in _simulator_builds(experiment) if b]

    def series_of(self, experiment: dict) -> str:
        # With builds, each simulator@build is a series of its own (the rows' simulator_build, snnbench.network.rows).
        return "simulator_build" if experiment.get("builds") else self.series

    def summary(self, experiment: dict, specs: list[dict]) -> str:
        model = experiment[self.name]
        size = (
            f"neuron scale {model['neuron_scale']:g}"
            if "neuron_scale" in model
            else f"neuron scale {model['neuron_scale_per_vp']:g} per VP"
        )
        shapes = sorted({_shape(s["resources"], "x") for s in specs})
        return (
            f"{experiment.get('description', '')} {len(specs)} points: {experiment['scaling']} scaling of "
            f"{self.model.title} at "
            f"{size}, in-degree scale {model['indegree_scale']:g}, {model.get('input', 'poisson')} input, "
            f"{model.get('t_sim_ms', 1000):g} ms measured after {model.get('t_presim_ms', 100):g} ms presimulation, "
            f"on {', '.join(experiment['simulators'])}{_builds_summary(experiment)}; "
            "shapes (nodes x ranks per node x threads per rank) "
            f"{', '.join(shapes)}; seeds {', '.join(map(str, experiment['seeds']))}." + _race_summary(experiment)
        ).strip()

    def derivations(self, spec: dict) -> dict[str, dict]:
        key = self.model.description_key(spec["model"])
        if key is None:
            return {}
        path = paths.NETWORK_DESCRIPTION.format(model=self.name, description=key)
        derivation = {"environment": self.model.description_environment, "module": self.model.description_module}
        return {path: {**derivation, "params": self.model.description_params(spec["model"])}}

    def derived_problem(self, path: str, derivation: dict) -> tuple[str, list[Path]] | None:
        # A description (and the data file it names, PD14's exported network.npz): cut short, of other
        # parameters, a data file missing or of another size than recorded.
        return inputs.description_problem(path, derivation["params"])

    def derived_environments(self, experiment: dict) -> list[str]:
        # A main environment (.venv: NEST for PD14's exported networks) is there already.
        environment = self.model.description_environment
        return [environment] if environment and environment not in environments.MAIN else []

    def cpu_environments(self) -> list[str]:
        """The environments of the simulators that build this model without a GPU (MPI ones too),
        and the one its description is derived in."""
        cpu = [s for name, s in simulator_registry.registered().items() if not s.gpus and name in self._simulators()]
        named = [env for s in cpu for env in (s.environment, s.mpi_environment) if env]
        named += self.derived_environments({})
        return [env for env in dict.fromkeys(named) if env not in environments.MAIN]

    def _simulators(self) -> list[str]:
        return simulator_registry.simulators_of(self.name)

    def environment(self, spec: dict) -> str:
        return environment_for(spec)

    def missing_environment(self, spec: dict) -> str | None:
        # Network points stop the workflow before any job: an MPI point of a simulator without MPI cannot run.
        try:
            environment_for(spec)
        except EnvironmentMissing as error:
            return str(error)
        return None

    def local_problem(self, spec: dict) -> tuple[str, str] | None:
        # A binding this machine's cores cannot give the shape (snnbench.network.binding).
        why = binding.local_problem(spec, *affinity.usable_cores())
        return ("binding", why) if why else None

    def resources(self, spec: dict, config: dict) -> dict:
        res = spec["resources"]
        return {
            "threads": res["virtual_processes"],
            "mem_mb": self._mem_mb_if_known(spec),
            "nodes": res["nodes"],
            # The ranks as SLURM tasks: in all (--ntasks) for one rank per node, else per node
            # (--ntasks-per-node): SLURM does not spread --ntasks evenly over nodes whose cores are
            # not all needed, and the executor plugin takes one of the two (tasks_per_node only above 1).
            "tasks": res["ranks"] if res["ranks_per_node"] == 1 else None,
            "tasks_per_node": res["ranks_per_node"] if res["ranks_per_node"] > 1 else None,
            "cpus_per_task": res["threads_per_rank"],
            # Marks multi-rank points as MPI jobs for the SLURM executor; the launcher itself is
            # chosen at run time (srun inside a SLURM allocation, mpirun elsewhere).
            "mpi": "srun" if res["ranks"] > 1 else None,
            "gpu": int(res.get("gpus", 0)),
        }

    def mem_mb(self, spec: dict, config: dict) -> int:
        return self.model.estimate_mem_mb(spec)

    def _mem_mb_if_known(self, spec: dict) -> int | None:
        """None while a derived input it needs (a description) does not exist yet, or is damaged (set
        aside before any job; a dry run only names it)."""
        try:
            return self.model.estimate_mem_mb(spec)
        except (FileNotFoundError, inputs.DamagedInput):
            return None

    def run_point(self, spec: dict, spec_path: Path, outputs: dict, log_path: Path, config: dict, time_limit_s: float):
        rec = execute.run_point(
            spec_path=spec_path,
            record_path=outputs["record.json"],
            spikes_path=outputs["spikes.npz"],
            log_path=log_path,
            # From the config, not the spec: a limit must not make finished points rerun.
            time_limit_s=time_limit_s,
            spec=spec,
        )
        damaged = inputs.damaged_line((rec["failure"] or {}).get("reason", ""))
        if damaged:
            # Not a result of the point: it read a damaged input (set aside by its reader). The job fails,
            # so that Snakemake names it and the next run redoes the point, the input made again first.
            raise SystemExit(damaged)
        return rec

    def import_run(self, spec: dict, run_dir: Path, outputs: dict, log_path: Path, config: dict) -> dict:
        record_path, spikes_path = outputs["record.json"], outputs["spikes.npz"]
        return execute.import_run(spec, run_dir, record_path, spikes_path, log_path)

    def row(self, rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
        return rows.point_row(rec, bounds, benchmark)

    def rank_rows(self, rec: dict) -> list[dict]:
        return rows.rank_rows(rec)

    def finish_table(self, points, beside: list, tolerance: dict | None):
        validations = [(point, files["validation.json"]) for point, files in beside if "validation.json" in files]
        return rows.finish_table(points, validations, tolerance, self.model.reference_simulator)

    def figures(self, config: dict) -> dict[str, list[str]]:
        return {**config["figures"]["experiment"], **self.model.figures}

    def describe(self, rec: dict) -> dict:
        spec = rec["point"]
        model = spec["model"]
        simulator = rec.get("simulator") or {"name": spec["simulator"], "version": ""}
        return {
            "simulator": f"{builds.label(spec)} {simulator.get('version') or ''}".strip(),
            "shape": _shape(spec["resources"], "x"),
            "model": f"N={model['neuron_scale']:g} K={model['indegree_scale']:g} {model['input']} "
            f"{model['t_sim_ms']:g} ms",
            "binding": binding.summary(rec),
        }

    def archived(self, config: dict) -> tuple[str, ...]:
        spikes = ("spikes.npz",) if config["archive"]["include_spikes"] else ()
        return ("spec.json", "record.json", "validation.json", "stats.npz", *spikes)


def _simulator_builds(experiment: dict) -> list[tuple[str, dict | None]]:
    """(simulator, the spec's build or None) for every simulator and build of the experiment."""
    named = experiment.get("builds") or {}
    if not named:
        return [(simulator, None) for simulator in experiment["simulators"]]
    registered = simulator_registry.registered()
    return [
        (simulator, builds.point_build(registered[simulator].environment, registered[simulator].build_package, n, b))
        for simulator in experiment["simulators"]
        for n, b in named.items()
    ]


def _environment_problems(where: str, specs: list[dict]) -> list[str]:
    """The named environments the points run in that cannot be made, one line each (a plugin's file
    missing from envs/ and $SNNBENCH_ENVIRONMENTS, a file naming no Python): before any job."""
    problems = {}
    for spec in specs:
        if "build" in spec:
            continue
        try:
            environment = environment_for(spec)
        except EnvironmentMissing:
            continue  # no MPI environment: the point says so when it runs
        if environment not in environments.MAIN and (problem := environments.problem(environment)):
            problems[problem] = f"{where}: simulator {spec['simulator']}: {problem}"
    return list(problems.values())


def _builds_summary(experiment: dict) -> str:
    named = experiment.get("builds") or {}
    return (
        " in builds "
        + ", ".join(f"{n} ({b.get('pip') or b.get('source') or ' '.join(b['modules'])})" for n, b in named.items())
        if named
        else ""
    )


def _race_summary(experiment: dict) -> str:
    if "race" not in experiment:
        return ""
    fields = race.spec_fields(experiment)
    differs = "; ".join(fields["deviations"]) or "none"
    return f" Community-race {fields['recipe']} recipe (Senk et al. 2026); differs from its checklist: {differs}."


def _shape(res: dict, sep: str) -> str:
    return sep.join(str(res[k]) for k in ("nodes", "ranks_per_node", "threads_per_rank"))


def _add_simulator_fields(spec: dict, experiment: dict) -> None:
    """Fields only some simulators have, added only to their points (other points' specs, and so
    their finished results, stay as they were): GPUs per point, and the simulator's options (the
    experiment's `brian2` or `genn`)."""
    simulator = simulator_registry.registered()[spec["simulator"]]
    if simulator.gpus:
        spec["resources"]["gpus"] = simulator.gpus
    if simulator.options:
        spec["simulator_options"] = dict(experiment.get(simulator.options, {}))
