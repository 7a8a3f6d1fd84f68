"""Supervising a point's child process, for every family: a time limit, the process group killed on
time-out or interrupt, the exit described (a signal, the out-of-memory killer), and inside a SLURM job
why SLURM stopped it. A run that does not finish cleanly raises PointFailed with the reason recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path


class PointFailed(Exception):
    """The run did not produce a result; the message is the reason recorded."""


class Terminated(Exception):
    """This process got SIGINT/SIGTERM: the workflow is interrupted or the job cancelled."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def in_slurm_job() -> bool:
    return "SLURM_JOB_ID" in os.environ


def slurm_stop_reason(wait_s: float = 5.0) -> str:
    """Why SLURM stops this job, from its accounting (sacct's state: NODE_FAIL, "CANCELLED by 0",
    TIMEOUT). The controller signals the job before the accounting hears of it: asked again until
    the state is final or wait_s have passed (SLURM's SIGKILL follows KillWait, 30 s by default)."""
    deadline, state = time.monotonic() + wait_s, None
    while True:
        try:
            command = ["sacct", "-X", "-n", "-P", "-j", os.environ["SLURM_JOB_ID"], "-o", "State"]
            state = subprocess.run(command, capture_output=True, text=True, timeout=5).stdout.strip() or state
        except (OSError, subprocess.TimeoutExpired):
            pass
        if (state and not state.startswith(("RUNNING", "COMPLETING"))) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if not state or state.startswith(("RUNNING", "COMPLETING")):
        return "job cancelled, out of time or a node lost"
    if state.startswith("NODE_FAIL"):
        return f"job state {state}: a node of the job was lost"
    return f"job state {state}"


def hold_sigterm() -> None:
    """Inside a SLURM job, once the run has ended: SLURM stopping the job signals all its processes,
    maybe more than once, and SIGKILLs them KillWait seconds later; the record is written first."""
    if in_slurm_job():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def sigterm_follows(wait_s: float = 2.0) -> bool:
    """Inside a SLURM job, after a failed run: whether SLURM's SIGTERM (held) arrives within wait_s."""
    return in_slurm_job() and signal.sigtimedwait([signal.SIGTERM], wait_s) is not None


def describe_exit(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        hint = " (the out-of-memory killer sends SIGKILL)" if name == "SIGKILL" else ""
        return f"killed by {name}{hint}"
    return f"exited with code {code}"


def last_lines(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def run_child(
    command: list[str], log_path: Path, time_limit_s: float, threads: int, environ: dict | None = None
) -> None:
    """Run the simulation (in `environ`, by default this process's environment); raise PointFailed
    if it does not finish cleanly in time."""
    env = dict(os.environ if environ is None else environ, OMP_NUM_THREADS=str(threads))
    with open(log_path, "ab") as log:
        log.write(f"[snnbench] running: {' '.join(command)}\n".encode())
        log.flush()
        # A session of its own, so a time-out can kill the whole process group (MPI ranks too).
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

        def forward(signum, frame):
            # Interrupted workflow or cancelled job: stop the run, let the caller decide.
            # No child.wait() here: the signal may arrive inside child.wait(timeout), whose lock a
            # second wait would block on forever. The killed child is reaped at exit.
            os.killpg(child.pid, signal.SIGKILL)
            raise Terminated(signum)

        previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            try:
                code = child.wait(timeout=time_limit_s)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                raise PointFailed(f"exceeded its time limit of {time_limit_s:g} s and was killed") from None
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    if code != 0:
        raise PointFailed(f"simulation {describe_exit(code)}; last log lines:\n{last_lines(log_path)}")


def last_line(log: Path) -> str:
    """The last non-empty line of a run's log, or that there is none."""
    lines = [line for line in (log.read_text(errors="replace").splitlines() if log.exists() else []) if line.strip()]
    return lines[-1].strip() if lines else f"no log ({log} is missing or empty)"


def run_end(run_dir: Path) -> str:
    """How a child that ran outside the workflow ended: its exit status where the runner wrote it
    (run_dir/exit_status; 124: killed by `timeout`), and the last line of its log."""
    status = Path(run_dir) / "exit_status"
    code = f"exit status {status.read_text().strip()}; " if status.exists() else ""
    return f"{code}its log ends: {last_line(Path(run_dir) / 'log.txt')}"
