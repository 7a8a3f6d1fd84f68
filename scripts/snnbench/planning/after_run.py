"""What the host that plans checks once a run has ended well: that it made what it was asked for.

Snakemake can end a run with "100% done" and exit code 0 while jobs its targets need were never
planned: a job that must run (a remade environment link) masks every job after it, and those that
read its output as `ancient` are then never looked at (snakemake/snakemake#4166). A run must end
having made its targets, or fail naming what it did not make.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from snnbench import paths

# What the workflow that planned the run does when it ends (common.smk registers them: "succeeded" after
# Snakemake's onsuccess, "failed" after its onerror). Snakemake calls only the main Snakefile's handlers, so a
# Snakefile that uses snnbench as a module calls ended() from its own (docs/deploy.md).
HANDLERS: dict[str, Callable[[], None]] = {}

# A forced file made by a job on another node carries that file server's clock.
CLOCK_SLACK_S = 2.0


def forced_by_rules(targets: list[str], rules) -> list[str]:
    """The targets that a forced rule (--forcerun <rule>, -F: Snakemake's Rule objects) makes: forced as
    much as a forced file, and masked the same way."""
    return [path for path in targets if any(rule.is_producer(path) for rule in rules)]


def not_made(targets: list[str], forced: list[str], started: float) -> list[str]:
    """The targets that do not exist, and the forced files (--forcerun) not made since `started`."""
    missing = [path for path in dict.fromkeys(targets) if not os.path.exists(path)]
    stale = [
        path
        for path in dict.fromkeys(forced)
        if os.path.exists(path) and os.path.getmtime(path) < started - CLOCK_SLACK_S
    ]
    return missing + stale


def _point_of(path: str) -> str:
    """The point folder (or other folder) a file lies in, as the user names it."""
    parts = os.path.relpath(path).split(os.sep)
    return "/".join(parts[:-1]) if parts[0] == paths.RESULTS and len(parts) > 3 else os.path.relpath(path)


def message(left: list[str], shown: int = 5) -> str:
    """One paragraph naming what a run did not make and what to do."""
    where = list(dict.fromkeys(_point_of(path) for path in left))
    listed = ", ".join(where[:shown]) + (f" and {len(where) - shown} more" if len(where) > shown else "")
    return (
        f"The run ended without making {len(left)} of its targets ({listed}): Snakemake left out jobs that "
        "had to run after a remade environment link (snakemake/snakemake#4166). Run the same command again; "
        "what was made is kept."
    )


def ended(succeeded: bool) -> None:
    """The workflow's handler of a run that ended: well (onsuccess) or with failed jobs (onerror)."""
    HANDLERS["succeeded" if succeeded else "failed"]()
