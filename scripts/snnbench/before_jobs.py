"""What the host that plans does once per run before any job, and a job never does: refuse a run
whose points cannot start or cannot write, and set damaged records aside.

The workflow calls prepare() only in Snakemake's main process (`workflow.is_main_process`; the
jobs an executor starts read the workflow again, in another mode), so a job's start-up neither
reads every record nor stats every point folder. Takes a planned campaign (snnbench.planning).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from snnbench import jsonfile, paths


class CannotRun(RuntimeError):
    """A run refused before any job: the message says what and where, and what to do."""


def prepare(campaign, dry_run: bool) -> Iterator[str]:
    """Refuse the run (CannotRun) if a point cannot start or write here; set damaged records aside
    (in a dry run only name them). Yields the lines to warn with, each as soon as it is known."""
    missing_environments(campaign)
    yield from set_aside_damaged(campaign, dry_run)
    unwritable_points(campaign)


def missing_environments(campaign) -> None:
    """A point that cannot start here and whose family says that must stop the workflow (e.g. an
    MPI point of a simulator without MPI). With conda, Snakemake makes the environments."""
    if campaign.uses_conda:
        return
    missing: dict[str, list[str]] = {}
    for path, spec in campaign.points.items():
        reason = campaign.family_of_point(spec).missing_environment(spec)
        if reason:
            missing.setdefault(reason, []).append(path)
    if missing:
        lines = [f"{reason}\n  needed by {len(ps)} point(s), e.g. {ps[0]}" for reason, ps in missing.items()]
        raise CannotRun("Missing environments:\n" + "\n".join(lines))


def set_aside_damaged(campaign, dry_run: bool) -> list[str]:
    """A record cut short (full disk, killed copy) would stop every table of its experiment: set it
    aside and drop its experiment's (derived) table, so that Snakemake reruns the point and remakes
    the tables (a missing intermediate file alone does not make it rerun anything), and say so."""
    lines = []
    for path, line in jsonfile.set_aside_damaged([f"{point}/record.json" for point in campaign.points], dry_run):
        lines.append(line)
        if not dry_run:
            experiment = campaign.points[str(Path(path).parent)]["experiment"]
            Path(f"{paths.RESULTS}/{experiment}/points.csv").unlink(missing_ok=True)
    return lines


def unwritable_points(campaign) -> None:
    """A point still to be run that cannot write its folder, log or benchmark: its job would fail
    after the others ran, and its experiment's tables would wait for it."""
    blocked: dict[str, list[str]] = {}
    for path, spec in campaign.points.items():
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
