"""The campaign a config asks for: read, checked, its defaults filled in, planned. The one planner.

The workflow (workflow/rules/common.smk), `python -m snnbench.planning.check` and the tests call
plan(), so a config is refused with the same lines everywhere: a header naming the config file(s),
then one line per problem naming the key and what is allowed (ConfigRefused).

Planning is pure: it reads the config, the schema and, on demand, the envs files, and changes
nothing (what the host that plans does once before any job is snnbench.planning.before_jobs). What only some
jobs ask for (the points, the environments to make, the validation indexes) is computed on first
use, one experiment at a time where it can be, so that a job the executor starts (which reads the
workflow again) does not plan the whole campaign to run one point.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import cached_property

from snnbench import environments, families, paths
from snnbench.environments import builds, maker
from snnbench.network import references
from snnbench.planning import experiments, panels
from snnbench.schemas import config_problems, fill_defaults

# Every family's point ends in its seed (snnbench.run.family.Family.point_pattern).
SEED = re.compile(r"(?:^|/)seed(\d+)$")


class ConfigRefused(ValueError):
    """A config that cannot run: `problems` are its lines, each naming the key and what is allowed."""

    def __init__(self, files, problems: list[str]):
        self.files = [shown_path(f) for f in files]
        self.problems = problems
        where = ", ".join(self.files) or "no config file"
        super().__init__(f"Error in config ({where}):\n" + "\n".join(f"  {line}" for line in problems))


def shown_path(path) -> str:
    """A config file's name as the messages show it, whoever gives it (Snakemake makes the names
    given with --configfile absolute): relative to the working directory if below it."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith(os.pardir) else relative


def unreadable(path) -> list[str]:
    """What makes a config file unreadable as a config, with its name and the line: a YAML syntax
    error, an empty file, a top level that is not a mapping of keys. [] if it reads, or is absent."""
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            content = yaml.safe_load(f)
    except FileNotFoundError:
        return []
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return [f"{path}{where}: not valid YAML: {getattr(error, 'problem', None) or error}"]
    if content is None:
        return [f"{path}: empty; a config file is a mapping of keys (experiments: [...], slurm: ..., ...)"]
    if not isinstance(content, dict):
        return [f"{path}: the top level is a {type(content).__name__}, not a mapping of keys (experiments: [...], ...)"]
    return []


def read_config(files) -> dict:
    """Config files merged as Snakemake merges them (later ones update earlier ones): the one reader
    of config files outside Snakemake (make check-config, the dev tools, import_runs)."""
    import yaml
    from snakemake.utils import update_config

    merged: dict = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            update_config(merged, yaml.safe_load(f))
    return merged


def plan_files(files=(), *, checked: bool = False) -> Campaign:
    """The campaign of config files given as Snakemake's --configfile gives them: on top of the
    workflow's config/config.yaml, named in Snakemake's order (the --configfile files first). What
    every entry point outside Snakemake plans with (make check-config, import_runs, the dev tools)."""
    files = [str(f) for f in files]
    return plan(read_config([paths.CONFIG, *files]), [*files, paths.CONFIG], checked=checked)


def load(config: dict, files=(), *, checked: bool = False) -> dict:
    """The config checked against the schema, its defaults filled in (in place: the workflow's
    `config` is this dict) and checked for what the schema cannot express. Raises ConfigRefused.
    checked: the process that started this one checked it (a job the executor starts): fill in
    the defaults only."""
    schema = families.config_schema()  # the schema file and the blocks of models registered from outside
    if isinstance(config.get("experiments"), list):  # planned before in this process: from what was configured
        config["experiments"] = references.configured(config["experiments"])
    problems = [] if checked else config_problems(config, schema)
    if not problems:
        fill_defaults(config, schema)
        experiments.inherit_site_defaults(config)
        problems = [] if checked else experiments.problems(config)
    if problems:
        raise ConfigRefused(files, problems)
    return config


def plan(config: dict, files=(), *, uses_conda: bool = False, checked: bool = False) -> Campaign:
    """The campaign of a raw config (files: where it came from, for the messages). Raises
    ConfigRefused. checked: as for load(); a job skips the checks across keys too (the panel check
    reads every figure module's source, and the family checks expand every point)."""
    campaign = Campaign(load(config, files, checked=checked), uses_conda, files)
    problems = [] if checked else campaign.figure_problems()
    if problems:
        raise ConfigRefused(files, problems)
    return campaign


class Campaign:
    """Everything the workflow's rules ask of a config: experiments, their families, points,
    figures, comparisons, archives, race standings, build comparisons, environments to make."""

    def __init__(self, config: dict, uses_conda: bool = False, files=()):
        self.config = config
        # The config files, as messages name them.
        self.files = [shown_path(f) for f in files]
        # With conda, Snakemake makes the points' environments; else the workflow does (rules
        # build_environment and link_environment).
        self.uses_conda = uses_conda
        self.experiments = {experiment["name"]: experiment for experiment in config["experiments"]}
        self.family = {name: families.of_experiment(experiment) for name, experiment in self.experiments.items()}
        self.used_families = {family.name: family for family in self.family.values()}
        figured = config["figures"]["experiments"] or list(self.experiments)
        # Experiments shared between configured ones (reference ensembles): experiment -> (shared one, its seeds).
        self.shared = experiments.add_shared(config, self.experiments, self.family)
        self.figure_experiments = figured
        self.figures = {
            name: (self.family[name].figures(config) if name in figured else {}) for name in self.experiments
        }
        self.comparisons = {comparison["name"]: comparison for comparison in config["figures"]["comparisons"]}
        self.archives = config["archives"]
        # Community-race performance experiments get their standings (rule race_standings).
        self.race = {
            name: e["race"] for name, e in self.experiments.items() if e.get("race", {}).get("recipe") == "performance"
        }
        # Experiments with several builds get the regression view between them, the first build the baseline.
        self.build_comparisons = {
            name: list(e["builds"]) for name, e in self.experiments.items() if len(e.get("builds") or {}) > 1
        }
        self._points_of: dict[str, dict[str, dict]] = {}
        self._points_of_seed: dict[tuple[str, int], dict[str, dict]] = {}

    # --- checks the schema cannot make across keys
    def figure_problems(self) -> list[str]:
        problems = self._panel_problems()
        configured = ", ".join(self.experiments)
        problems += [
            f"figures.experiments names {name!r}, not a configured experiment (configured: {configured})"
            for name in self.figure_experiments
            if name not in self.experiments
        ]
        for comparison in self.comparisons.values():
            for entry in comparison["tables"]:
                source, _, experiment = entry.rpartition("/")
                if (source and source not in self.archives) or (not source and experiment not in self.experiments):
                    problems.append(
                        f"figures.comparisons ({comparison['name']}).tables names {entry!r}: neither an experiment "
                        "nor '<archive>/<experiment>' with an archive from `archives`"
                    )
        return problems

    def _panel_problems(self) -> list[str]:
        known = panels.names()  # the figure modules' panels, read from their source (no matplotlib)
        configured = self.config["figures"]["experiment"]
        named = [(f"figures.experiment.{name}", listed) for name, listed in configured.items()]
        named += [(f"figures.comparisons ({c['name']}).panels", c["panels"]) for c in self.comparisons.values()]
        # A family's own figures (not the config's), e.g. snn-training's.
        named += [
            (f"the figure {figure!r} of experiment {name}", listed)
            for name, experiment in self.figures.items()
            for figure, listed in experiment.items()
            if configured.get(figure) != listed
        ]
        problems = []
        for where, names in named:
            unknown = [p for p in names if p not in known]
            if unknown:
                # The closest names, not all of them: the list of every panel outgrew one readable line.
                close = sorted({c for p in unknown for c in difflib.get_close_matches(p, known, n=3)})
                hint = f"close: {', '.join(close)}; " if close else ""
                problems.append(
                    f"{where} names unknown panels {unknown} ({hint}all {len(known)} panels: docs/figures.md)"
                )
        return problems

    # --- points, one experiment at a time, one seed where that is enough
    def points_of(self, experiment: str) -> dict[str, dict]:
        """The experiment's points keyed by their directory (expanded on first use)."""
        if experiment not in self._points_of:
            specs = experiments.expand_points(self.experiments[experiment])
            self._points_of[experiment] = {spec["path"]: spec for spec in specs}
        return self._points_of[experiment]

    @cached_property
    def points(self) -> dict[str, dict]:
        """Every point of every experiment, keyed by its directory."""
        return {path: spec for name in self.experiments for path, spec in self.points_of(name).items()}

    def points_of_seed(self, experiment: str, seed: int) -> dict[str, dict]:
        """The experiment's points of one seed (every shape, simulator and build), keyed by directory:
        what a job, or a run aimed at some points, needs without expanding every seed."""
        if experiment in self._points_of:
            return {path: spec for path, spec in self._points_of[experiment].items() if spec["seed"] == seed}
        key = (experiment, seed)
        if key not in self._points_of_seed:
            config = self.experiments[experiment]
            specs = experiments.expand_points({**config, "seeds": [seed]}) if seed in config["seeds"] else []
            self._points_of_seed[key] = {spec["path"]: spec for spec in specs if spec["seed"] == seed}
        return self._points_of_seed[key]

    def representatives(self) -> list[dict]:
        """One seed's points of every experiment: each shape, simulator and build once, for what does
        not depend on the seed (environments, what a point needs to start)."""
        return [
            spec
            for name, experiment in self.experiments.items()
            for spec in self.points_of_seed(name, experiment["seeds"][0]).values()
        ]

    def point(self, experiment: str, point: str) -> dict | None:
        """The spec at results/<experiment>/<point>, None if no configured point lives there (only the
        point's seed is expanded)."""
        seed = SEED.search(point)
        if experiment not in self.experiments or seed is None:
            return None
        if int(seed.group(1)) not in self.experiments[experiment]["seeds"]:
            return None
        return self.points_of_seed(experiment, int(seed.group(1))).get(paths.point_path(experiment, point))

    def family_of_point(self, spec: dict):
        return self.family[spec["experiment"]]

    # --- environments
    def point_environment(self, spec: dict) -> str | None:
        """The named environment a point runs in, if the workflow makes it (None: .venv, conda, a build)."""
        family = self.family[spec["experiment"]]
        environment = family.environment(spec)
        made = family.workflow_makes_environment(spec) and environment not in environments.MAIN
        return environment if made and not self.uses_conda and "build" not in spec else None

    def linked_environment(self, spec: dict) -> str | None:
        """This checkout's .venv-<name> a point runs in (its build's, or a named one's); None for
        .venv, conda, or a build of the site's modules (loaded by the point itself)."""
        if "build" in spec:
            return None if builds.is_modules(spec["build"]) else builds.linked_name(spec["build"])
        return self.point_environment(spec)

    def linked_environments(self) -> list[str]:
        """Every link the campaign's points and derivations run in."""
        names = [self.linked_environment(spec) for spec in self.representatives()]
        if not self.uses_conda:
            names += [d["environment"] for d in self.derivations.values()]
        return sorted({name for name in names if name and name not in environments.MAIN})

    @cached_property
    def environments_to_make(self) -> dict[str, dict]:
        """Environments the workflow makes once per machine in the per-user cache: key -> {content:
        what defines it, experiments: those whose points need it}. Simulator builds, and the named
        environments (envs/<name>.yaml) of points that do not run in .venv (each read once per
        experiment that needs it, not once per point)."""
        made: dict[str, dict] = {}

        def needs(key, content, experiment):
            entry = made.setdefault(key, {"content": content, "experiments": []})
            if experiment not in entry["experiments"]:
                entry["experiments"].append(experiment)

        for name, experiment in self.experiments.items():
            for _label, build in self.family[name].builds(experiment):
                if not builds.is_modules(build):  # the site's modules: nothing to make
                    needs(build["key"], builds.content(build), name)
        for environment, name in dict.fromkeys(
            (self.point_environment(s), s["experiment"]) for s in self.representatives()
        ):
            if environment:
                needs(environments.key(environment), maker.named_build(environment), name)
        for name, experiment in self.experiments.items():
            for environment in self.family[name].derived_environments(experiment):
                if not self.uses_conda:
                    needs(environments.key(environment), maker.named_build(environment), name)
        return made

    @cached_property
    def derivations(self) -> dict[str, dict]:
        """Files points read that a rule derives once (a network description): path -> derivation
        (snnbench.run.family.Family.derivations); a model's parameters do not depend on the seed."""
        return {path: d for s in self.representatives() for path, d in self.family_of_point(s).derivations(s).items()}

    # --- validation: each validated point's reference run and other seeds, indexed once
    @cached_property
    def _validated(self) -> list[dict]:
        return [spec for spec in self.points.values() if "validation.json" in self.family_of_point(spec).collected]

    @cached_property
    def reference_simulators(self) -> dict[str, str]:
        """Each validated experiment's one reference simulator (validation, rate agreement, figures)."""
        names = {spec["experiment"] for spec in self._validated}
        return {name: self.family[name].validation_reference(self.experiments[name]) for name in names}

    @cached_property
    def ensembles(self) -> dict[str, list[str]]:
        """Each validated point's reference ensemble (the reference run first)."""
        return references.ensemble_index(self._validated, None, self.reference_simulators, self.shared)

    def context_points(self, experiment: str) -> list[str]:
        """Points of other experiments that judging this one's reads (its shared ensemble's members):
        collect reads their records beside its own and leaves their rows out of its tables."""
        own = self.points_of(experiment)
        members = (m for path in own for m in self.ensembles.get(path, ()))
        return sorted({m for m in members if m not in own})

    @cached_property
    def seed_peers(self) -> dict[str, list[str]]:
        return references.seed_peer_index(self._validated, self.config["validation"]["seed_peers"])

    # --- what the workflow makes in the end, and what figures and comparisons read
    def final_outputs(self) -> list[str]:
        """Every target of `rule all`: tables, provenance and figures of each experiment, race
        standings, comparisons, build comparisons, the regression view if a baseline is set, and
        every point's record and collected files: Snakemake remakes a missing file only for a job
        that needs to run (a target's missing input is such a need, a missing input of an
        up-to-date table is not), so a deleted record makes its point and its tables run again."""
        both = ("png", "pdf")
        outputs = ["results/points.csv"]
        for path, spec in self.points.items():
            outputs += [f"{path}/{name}" for name in ("record.json", *self.family_of_point(spec).collected)]
        for name, figures in self.figures.items():
            outputs += [f"results/{name}/points.csv", f"results/{name}/provenance.html"]
            outputs += [f"results/{name}/figures/{figure}.{ext}" for figure in figures for ext in both]
        outputs += [f"results/{name}/race/standings.{ext}" for name in self.race for ext in ("csv", "md", *both)]
        outputs += [f"{paths.COMPARISONS_DIR}/{name}.{ext}" for name in self.comparisons for ext in both]
        outputs += [f"results/{name}/builds.csv" for name in self.build_comparisons]
        outputs += [f"results/{name}/figures/builds.{ext}" for name in self.build_comparisons for ext in both]
        if self.config["regression"]["baseline"]:
            outputs.append("results/regression.csv")
        # The links as plain targets (points read them as ancient inputs): a link remade (a new cache, an
        # edited envs file) then cannot hide the points still to run (snakemake/snakemake#4166).
        outputs += [str(environments.link_marker(name)) for name in self.linked_environments()]
        return outputs

    def figure_params(self, experiment: str, figure: str) -> dict:
        from snnbench.figures import caption  # the figure modules: only in jobs that draw

        panels = self.figures[experiment][figure]
        series = self.family[experiment].series_of(self.experiments[experiment])
        # the shared ensemble's members that judged the experiment (none without one): its figures show them
        shown = self.context_points(experiment)
        return {"panels": panels, "series": series, "caption": caption(panels), "reference_points": shown}

    def figure_reference(self, experiment: str) -> list[str]:
        """The table of the shared reference ensemble that judged the experiment's points, where it has one
        (its figures show those runs beside its own)."""
        return [f"results/{self.shared[experiment][0]}/points.csv"] if experiment in self.shared else []

    def figure_stats(self, experiment: str, figure: str) -> list[str]:
        """Spike statistics that a figure's distribution panels show: one seed per series and shape, the
        shared reference ensemble's members that judged the experiment included."""
        from snnbench.figures import needs_distributions

        if not needs_distributions(self.figures[experiment].get(figure, [])):
            return []
        specs = list(self.points_of(experiment).values())
        if experiment in self.shared:
            members = self.points_of(self.shared[experiment][0])
            specs += [members[path] for path in self.context_points(experiment) if path in members]
        return [f"{path}/stats.npz" for path in references.figure_points(specs)]

    def comparison_tables(self, comparison: str) -> list[str]:
        tables = []
        for entry in self.comparisons[comparison]["tables"]:
            source, _, experiment = entry.rpartition("/")
            tables.append(f"{paths.IMPORTED_DIR}/{source}/points.csv" if source else f"results/{experiment}/points.csv")
        return tables

    def comparison_params(self, comparison: str) -> dict:
        from snnbench.figures import caption

        entry = self.comparisons[comparison]
        return {
            "panels": entry["panels"],
            "tables": entry["tables"],
            "caption": caption(entry["panels"]),
            "description": entry.get("description", ""),
        }
