"""What a head killed hard leaves behind, dealt with before a new head plans: its lock, and its SLURM jobs.

The head (`snakemake --profile profiles/slurm`, which submits every point as a job and watches it) stopped by
SIGTERM waits for its jobs and unlocks; one killed (SIGKILL, a lost login node) leaves its queued and running
jobs to SLURM and its lock in .snakemake/locks. The SLURM executor plugin (2.8.0) neither adopts nor cancels such
jobs: a new head in the folder, once unlocked, submitted their points again, so that each ran twice (the test
cluster's jobs 117-120 and 121-124 for the same four points, 2026-11-28). So before any job the planning host
names the lock with the command that clears it, and waits for jobs still queued or running in this folder:
their points' records then stand, and the new head submits only what is left.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# Jobs SLURM has not finished (squeue's short names): queued, starting, running, ending, suspended.
UNFINISHED = "PD,CF,R,CG,S"
SQUEUE_TIMEOUT_S = 30
POLL_S = 10
# The executor plugin's --comment of a job: the rule and its wildcards.
JOB_COMMENT_PREFIX = "rule_"
# Snakemake's locks in a working folder: <n>.input.lock and <n>.output.lock, a path per line.
LOCKS = Path(".snakemake", "locks")


def settle(workdir: Path, dry_run: bool, argv: list[str], wait_s: float = POLL_S) -> Iterator[str]:
    """Lines to warn with: a lock to clear (Snakemake refuses to run right after: nothing waits), else the
    earlier head's jobs in this folder, waited for until SLURM lists none (in a dry run only named)."""
    if "--unlock" in argv:
        return
    if any((workdir / LOCKS).glob("*.lock")):
        yield locked(argv)
        return
    jobs = unfinished_jobs(workdir)
    if not jobs:
        return
    listed = ", ".join(f"{job} ({comment.removeprefix(JOB_COMMENT_PREFIX)})" for job, comment in jobs.items())
    found = f"SLURM jobs of an earlier head are still queued or running in this folder: {listed}"
    if dry_run:
        yield f"{found}; a run waits for them"
        return
    yield f"{found}. Waiting for them to end, so that no point runs twice (squeue -j {','.join(jobs)}; Ctrl-C stops)"
    started = time.monotonic()
    while jobs:
        time.sleep(wait_s)
        jobs = unfinished_jobs(workdir)
    yield f"The earlier head's jobs ended after {time.monotonic() - started:.0f} s: their points are not run again"


def held_files(workdir: Path) -> set[str]:
    """The files a head running in `workdir`, or one killed hard, is making: the outputs its lock names
    (Snakemake's .snakemake/locks/<n>.output.lock, a path per line), relative to `workdir`. Its jobs may be
    writing them, so no other head judges them."""
    held = set()
    for lock in (workdir / LOCKS).glob("*.output.lock"):
        try:
            lines = lock.read_text().splitlines()
        except OSError:  # (a lock its head just removed)
            continue
        held.update(os.path.relpath(os.path.join(workdir, line.strip()), workdir) for line in lines if line.strip())
    return held


def locked(argv: list[str]) -> str:
    """The line naming a lock in the folder and the command that clears it: this command with --unlock."""
    command = shlex.join([*argv, "--unlock"])
    return (
        f"This folder is locked ({LOCKS}): by a head running in it, or left by one killed "
        f"hard (SIGKILL, a lost login node). If no other head runs here, clear it with: {command}"
    )


def unfinished_jobs(workdir: Path, run: Callable | None = None) -> dict[str, str]:
    """This user's SLURM jobs that the executor plugin submitted from `workdir` and SLURM has not finished:
    job id -> its comment (rule and wildcards); none where squeue cannot tell (not a SLURM host)."""
    try:
        out = (run or subprocess.run)(
            ["squeue", "--me", "-h", "-t", UNFINISHED, "-o", "%i|%Z|%k"],
            capture_output=True,
            text=True,
            timeout=SQUEUE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    if out.returncode != 0:
        return {}
    here = os.path.realpath(workdir)
    jobs = {}
    for line in out.stdout.splitlines():
        job, folder, comment = (line.strip().split("|", 2) + ["", ""])[:3]
        if comment.startswith(JOB_COMMENT_PREFIX) and os.path.realpath(folder) == here:
            jobs[job] = comment
    return jobs
