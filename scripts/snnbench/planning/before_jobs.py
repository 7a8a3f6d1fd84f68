"""What the host that plans does once per run before any job, and a job never does: refuse a run
whose points cannot start or cannot write, and set damaged records and damaged inputs (a network's
description and the data file it names) aside.

The workflow calls prepare() only in Snakemake's main process (`workflow.is_main_process`; the
jobs an executor starts read the workflow again, in another mode), so a job's start-up neither
reads every record nor stats every point folder. Takes a planned campaign (snnbench.planning.campaign).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from snnbench import environments, jsonfile, paths
from snnbench.environments import builds, sources
from snnbench.planning import earlier_head, slurm_request
from snnbench.records import inputs, record


class CannotRun(RuntimeError):
    """A run refused before any job: the message says what and where, and what to do."""


def prepare(campaign, dry_run: bool, command: CommandLine | None = None) -> Iterator[str]:
    """Refuse the run (CannotRun) if a point cannot start or write here, or, under a cluster
    executor, if the nodes cannot see what its jobs need; set damaged files aside (in a dry run
    only name them). Only the points the command aims at are looked at (all of them for `rule
    all`, a rule or a table), so that a run aimed at one point costs the same in a campaign of any
    size. Yields the lines to warn with, each as soon as it is known."""
    command = command or CommandLine()
    refuse_space_in_python(sys.executable)
    if command.executor not in LOCAL_EXECUTORS:
        refuse_node_local(needed_on_nodes(campaign), campaign.config["slurm"]["node_local_paths"])
    missing_environments(campaign)
    points = aimed_points(campaign, command.targets)
    if command.executor in LOCAL_EXECUTORS:
        yield from unplaceable_here(campaign, points, dry_run)
    elif command.executor == "slurm":
        refuse_unplaceable_on_slurm(campaign, points)
    # What a head running here (or killed hard, its jobs running on) is writing looks cut short while it is
    # written: not judged (Snakemake refuses this run where its files overlap that head's).
    held = earlier_head.held_files(Path.cwd())
    held_folders = {os.path.dirname(f) for f in held}  # (a point's outputs lie in its folder)
    free = {path: spec for path, spec in points.items() if os.path.normpath(path) not in held_folders}
    yield from set_aside_damaged(campaign, free, dry_run)
    yield from set_aside_damaged_inputs(campaign, free, dry_run, held)
    yield from set_aside_stale_links(campaign.linked_environments(), dry_run)
    unwritable_points(campaign, points)
    yield from fetch_sources(campaign, dry_run)


NOTHING_RUN = "\nNothing was run."
# Snakemake's executors that run jobs on this machine (a dry run's pseudo-executors included).
LOCAL_EXECUTORS = (None, "local", "dryrun", "touch")


@dataclass(frozen=True)
class CommandLine:
    """What the running `snakemake` command was given: its executor (--executor, or its profile's)
    and its targets; None and () where the workflow was not started from Snakemake's command line
    (e.g. its Python API). While the Snakefile is read the workflow knows neither (its executor
    and DAG settings are set after)."""

    executor: str | None = None
    targets: tuple[str, ...] = ()

    @classmethod
    def of_this_process(cls) -> CommandLine:
        import contextlib
        import io

        from snakemake import cli

        started = Path(sys.argv[0])
        if started.name != "snakemake" and started.parts[-2:] != ("snakemake", "__main__.py"):
            return cls()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as said:
                args = cli.parse_args(sys.argv[1:])[1]
        except (SystemExit, Exception) as error:  # noqa: BLE001 (any failure: the executor is unknown)
            # Taken as local, a cluster run would skip the node-local checks and be judged by this machine.
            why = (said.getvalue().strip().splitlines() or [repr(error)])[-1]
            raise CannotRun(
                f"Cannot read this snakemake command line ({' '.join(sys.argv[1:])}): {why}. The checks before any "
                "job depend on its executor (local or a cluster's), so nothing was run."
            ) from None
        return cls(args.executor, tuple(args.targets or ()))


def aimed_points(campaign, targets: tuple[str, ...]) -> dict[str, dict]:
    """The points a command's targets aim at: those whose folder holds a target; every point where a
    target is a rule, a table or anything else, or where there is no target (`rule all`)."""
    aimed: dict[str, dict] = {}
    for target in targets:
        spec = _point_of_target(campaign, os.path.normpath(target))
        if spec is None:
            return campaign.points
        aimed[spec["path"]] = spec
    return aimed or campaign.points


def _point_of_target(campaign, target: str) -> dict | None:
    """The point whose folder holds the target file (results/<experiment>/<point>/...), else None."""
    parts = target.split("/")
    if len(parts) < 4 or parts[0] != paths.RESULTS or parts[1] not in campaign.experiments:
        return None
    for end in range(len(parts) - 1, 2, -1):
        spec = campaign.point(parts[1], "/".join(parts[2:end]))
        if spec is not None:
            return spec
    return None


def refuse_unplaceable_on_slurm(campaign, points: dict[str, dict], nodes=None) -> None:
    """Points that no node of their partition can hold as asked (snnbench.planning.slurm_request), refused
    here rather than by sbatch one job at a time; where sinfo cannot tell, SLURM's refusal names them."""
    nodes = slurm_request.partition_nodes() if nodes is None else nodes
    lines = slurm_request.unplaceable(points, campaign.config, campaign.experiments, nodes or [])
    if lines:
        raise CannotRun(
            "Too few nodes of the partition can hold these points as asked:\n  "
            + "\n  ".join(lines)
            + "\nAsk fewer ranks per node or threads per rank, another partition (slurm.partition) or more threads "
            "per core (slurm.threads_per_core)." + NOTHING_RUN
        )


def refuse_space_in_python(python: str) -> None:
    """Snakemake's `script:` runs the jobs' Python by its path without quotes
    (snakemake/snakemake#2645): with a space in it, every job would fail with a bare shell error."""
    if any(c.isspace() for c in python):
        raise CannotRun(
            f"The workflow's Python has a space in its path ({python}): Snakemake runs each job's Python by its "
            "path unquoted (snakemake/snakemake#2645), so every job would fail. Clone the workflow into a path "
            "without spaces (and run `make env` there); nothing was run."
        )


def needed_on_nodes(campaign) -> dict[str, str]:
    """What a cluster's jobs read or write, by what it is: the interpreter that runs the workflow
    (a job starts Snakemake with it), the working directory and results, the points' environments
    (or their builds' module folders)."""
    needed = {
        "the workflow's Python (sys.executable)": os.path.abspath(sys.executable),
        "the working directory": os.getcwd(),
        "the results folder": os.path.realpath(paths.RESULTS),
    }
    for spec in campaign.representatives():
        if "build" in spec and builds.is_modules(spec["build"]):
            for folder in spec["build"].get("modulepath", []):
                needed[f"the modulepath of build {spec['build']['name']}"] = os.path.realpath(folder)
            continue
        environment = campaign.linked_environment(spec)
        if environment:
            link = environments.linked(environment)
            needed[f"the environment .venv-{environment}"] = str(link)
            needed[f"the environment .venv-{environment} (where its link leads)"] = os.path.realpath(link)
    return needed


def refuse_node_local(needed: dict[str, str], node_local: list[str]) -> None:
    """Refuse (CannotRun) if any of `needed` (what -> absolute path) lies under a node-local
    prefix: a cluster's node has its own /tmp, so a job there would not find it."""
    local = {
        what: path
        for what, path in needed.items()
        if any(os.path.commonpath([path, prefix]) == os.path.normpath(prefix) for prefix in node_local)
    }
    if local:
        lines = [f"  {what}: {path}" for what, path in local.items()]
        raise CannotRun(
            f"Under a node-local folder ({', '.join(node_local)}; config key slurm.node_local_paths), which the "
            "cluster's nodes do not see:\n" + "\n".join(lines) + "\nClone the workflow onto a file system the nodes "
            "share (e.g. your home or project folder), run `make env` there and start Snakemake from it; nothing "
            "was run."
        )


def unplaceable_here(campaign, points: dict[str, dict], dry_run: bool) -> Iterator[str]:
    """refuse_unplaceable; a dry run (which may plan for another machine, e.g. a GPU machine's
    presets) only says that the run would be refused."""
    try:
        refuse_unplaceable(campaign, points)
    except CannotRun as refused:
        if not dry_run:
            raise
        yield f"on this machine the run would be refused: {str(refused).removesuffix(NOTHING_RUN)}"


def refuse_unplaceable(campaign, points: dict[str, dict]) -> None:
    """Under an executor that runs jobs on this machine: refuse, among the points the command aims
    at, those that cannot run here as their experiment asks (its family's local_problem, e.g. a
    binding with more threads than cores), naming the experiment's key."""
    index = {experiment["name"]: i for i, experiment in enumerate(campaign.config["experiments"])}
    found: dict[str, str] = {}
    for spec in points.values():
        problem = campaign.family_of_point(spec).local_problem(spec)
        if problem:
            key, why = problem
            where = f"experiments[{index[spec['experiment']]}].{key} ({spec['experiment']}: {spec.get(key)})"
            found.setdefault(f"{where}: {why}", spec["path"])
    if found:
        lines = [f"  {problem}\n    e.g. point {path}" for problem, path in found.items()]
        where = ", ".join(campaign.files) or "no config file"
        raise CannotRun(f"Error in config ({where}) for this machine:\n" + "\n".join(lines) + NOTHING_RUN)


def missing_environments(campaign) -> None:
    """A point that cannot start here and whose family says that must stop the workflow (e.g. an
    MPI point of a simulator without MPI). With conda, Snakemake makes the environments."""
    if campaign.uses_conda:
        return
    missing: dict[str, list[str]] = {}
    for spec in campaign.representatives():  # what a point needs to start does not depend on its seed
        reason = campaign.family_of_point(spec).missing_environment(spec)
        if reason:
            missing.setdefault(reason, []).append(spec["path"])
    if missing:
        lines = [f"{reason}\n  needed by points such as {ps[0]}" for reason, ps in missing.items()]
        raise CannotRun("Missing environments:\n" + "\n".join(lines))


def sources_to_fetch(campaign) -> list[str]:
    """The third-party sources of the environments this run still has to make."""
    names = []
    for key, entry in campaign.environments_to_make.items():
        if environments.made_marker(key).exists():
            continue
        content = entry["content"]
        if content.get("third_party"):  # a named environment's (`# source:` line)
            names.append(content["third_party"]["source"])
        if content.get("source") in sources.SOURCES:  # a simulator build's release (`source: nest-simulator-3.8`)
            names.append(content["source"])
    return list(dict.fromkeys(names))


def fetch_sources(campaign, dry_run: bool) -> Iterator[str]:
    """Every source the run's environments are built from, located or downloaded here and verified
    before any job: on the host that plans (a cluster's login node reaches the internet where its
    nodes may not), so that a missing one stops the run at once rather than after other builds."""
    names = sources_to_fetch(campaign)
    if dry_run or not names:
        yield from (f"source {name} would be located or downloaded before the builds" for name in names)
        return
    settings = sources.Settings.of(campaign.config)
    try:
        for name, path in sources.ensure(names, settings).items():
            yield f"source {name}: {path}"
    except sources.SourceMissing as error:
        raise CannotRun(f"{error}; nothing was run.") from None


def set_aside_damaged(campaign, points: dict[str, dict], dry_run: bool) -> list[str]:
    """A point's file cut short (full disk, killed copy) or not of its kind (a record the schema
    refuses, a spec of another point, spikes that are not an .npz of spikes) would stop every table
    of its experiment: set it aside, so that its point (or its step) runs again (records and
    collected files are targets of `rule all`), and say so."""
    lines = []
    for point, spec in points.items():
        family = campaign.family_of_point(spec)
        lines += _set_aside_damaged_spec(family, spec, dry_run)
        checks = {"record.json": partial(_record_problem, family, spec)}
        checks.update({name: partial(family.collected_problem, name) for name in family.collected})
        for name, wrong_shape in checks.items():
            lines += [line for _, line in jsonfile.set_aside_damaged([f"{point}/{name}"], dry_run, wrong_shape)]
        for name in (name for name in family.outputs if name not in checks):  # not JSON: spikes.npz
            lines += _set_aside_damaged_output(Path(point, name), partial(family.output_problem, name), dry_run)
        for name in family.statistics:  # stats.npz: made again by the first step that reads it
            problem = partial(family.output_problem, name)
            lines += _set_aside_damaged_output(Path(point, name), problem, dry_run, "made again where read")
    return lines


def _set_aside_damaged_spec(family, planned: dict, dry_run: bool) -> list[str]:
    """A damaged spec.json, written again from the plan at once: Snakemake does not remake a missing input
    of a finished job. Its point then runs again where its record is not of the plan (Snakemake compares
    a small input's checksum with the one its outputs were made from)."""
    path = f"{planned['path']}/spec.json"
    problem = partial(_spec_problem, family, planned)
    found = jsonfile.set_aside_damaged([path], dry_run, problem, "written again from the plan")
    if found and not dry_run:
        jsonfile.write_json(planned, path)  # as configure_point writes it
    return [line for _, line in found]


def _set_aside_damaged_output(path: Path, problem, dry_run: bool, then: str = "its point runs again") -> list[str]:
    """A point's output that only running it makes (its spikes), damaged: set aside, so that its point runs
    again rather than a later step dying on it."""
    found = problem(path) if path.exists() else None
    if not found:
        return []
    action = "would be set aside" if dry_run else f"set aside as {jsonfile.set_aside(path).name}"
    return [f"{path} {found}; {action}, {then}"]


def set_aside_damaged_inputs(campaign, points: dict[str, dict], dry_run: bool, held=frozenset()) -> list[str]:
    """Files the points read that a rule made once for many (a network's description and the data file it
    names), checked cheaply by their family (cut short, of other parameters, a data file missing or of
    another size): a damaged one is set aside and said so (a dry run only names it), so that its rule
    makes it again before the first point that reads it and runs (finished points are not redone for
    it). Their digests are checked where a point reads them (snnbench.records.inputs)."""
    derived: dict[str, tuple] = {}
    for spec in points.values():
        family = campaign.family_of_point(spec)
        for path, derivation in family.derivations(spec).items():
            if os.path.normpath(path) not in held:  # (being made by a head running here)
                derived.setdefault(path, (family, derivation))
    problems = {path: family.derived_problem(path, derivation) for path, (family, derivation) in derived.items()}
    return inputs.set_aside_damaged({path: found for path, found in problems.items() if found}, dry_run)


def set_aside_stale_links(names: list[str], dry_run: bool, repo: Path = paths.REPO) -> list[str]:
    """A link's marker (.venv-<name>/.installed) that is there but does not hold the key of the environment the
    link stands on (cut short, edited, a folder in its place): Snakemake takes the link as made and would not
    link it again, and every point in it would fail. Set aside, so that rule link_environment links it again
    before they run (they read the marker as `ancient`: finished points are not redone)."""
    lines = []
    for name in names:
        marker, key = environments.link_marker(name, repo), builds.linked_key(name) or environments.key(name)
        if not marker.exists() or environments.is_linked(name, repo, key):
            continue
        action = "would be set aside" if dry_run else f"set aside as {jsonfile.set_aside(marker).name}"
        lines.append(f"{marker} does not hold the key {key} of the environment it links; {action}, linked again")
    return lines


def _spec_problem(family, planned: dict, content) -> str | None:
    """A spec of another point, or not the plan for its path and not what its point ran (a spec edited by
    hand; one its point ran is of a config changed since, and Snakemake reruns the point for its params)."""
    point = planned["path"]
    if not isinstance(content, dict):
        return "not a JSON object"
    if content.get("path") != point:
        return f"its path is {content.get('path')!r}, not {point!r}"
    other = _other_point(family, planned, content, "its fields are of")
    if other:
        return other
    differ = record.point_differences(content, planned)
    if not differ or content == (jsonfile.read_json_if_whole(f"{point}/record.json") or {}).get("point"):
        return None
    return f"not the plan for its path, nor what its point ran: {differ}"


def _record_problem(family, planned: dict, content) -> str | None:
    """Not a record, or the record of another point."""
    return record.shape_problem(content) or _other_point(family, planned, content["point"], "it is the record of")


def _other_point(family, planned: dict, spec: dict, words: str) -> str | None:
    """Where a spec's own fields (its seed, its shape) make another point than the folder it lies in."""
    point = planned["path"]
    try:
        made = family.point_dir(spec) if spec.get("path") == point else spec.get("path")
    except (KeyError, TypeError, ValueError):  # fields of another family, or none
        return f"its point is not one of {family.name}'s"
    return None if made == point else f"{words} point {made}: {record.point_differences(spec, planned)}"


def unwritable_points(campaign, points: dict[str, dict]) -> None:
    """A point still to be run that cannot write its folder, log or benchmark: its job would fail
    after the others ran, and its experiment's tables would wait for it."""
    blocked: dict[str, list[str]] = {}
    for path, spec in points.items():
        family = campaign.family_of_point(spec)
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
        raise CannotRun(
            "Cannot write where points of this run write (permissions, an immutable flag, a read-only file system "
            "or a file in the way):\n" + "\n".join(lines) + "\nMake it writable, or leave its experiment out of the "
            "config; nothing was run."
        )
