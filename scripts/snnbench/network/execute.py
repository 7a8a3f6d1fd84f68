"""Run one scaling point in a child process and write its record, whatever happens to the run.

The simulation runs in a fresh process (or MPI job) so that a crash, a kill by the
out-of-memory killer or a time-out cannot take the record with it: such a point is recorded
with status `failed` and the reason, and the workflow goes on with the other points.
An interrupt of the workflow itself (SIGINT/SIGTERM to this process) leaves no record, so the
point counts as not run and is redone when the workflow resumes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from snnbench import energy, record
from snnbench.environments import EnvironmentMissing
from snnbench.memory import process_mb
from snnbench.network import activity, race
from snnbench.network.models import pd14
from snnbench.network.simulators import python_for


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


def launch_command(spec: dict, spec_path: Path, rank_dir: Path) -> list[str]:
    """The command that runs the point: its environment's Python for one rank, under an MPI
    launcher for more."""
    res = spec["resources"]
    launcher = []
    if res["ranks"] > 1 and in_slurm_job():
        # Ranks as tasks of this allocation, the same number on each node; SLURM binds each to its
        # cpus_per_task cores.
        launcher = [
            "srun",
            f"--nodes={res['nodes']}",
            f"--ntasks={res['ranks']}",
            f"--ntasks-per-node={res['ranks_per_node']}",
            f"--cpus-per-task={res['threads_per_rank']}",
        ]
    elif res["ranks"] > 1:
        if res["nodes"] > 1:
            raise PointFailed(
                f"a {res['nodes']}-node point needs a SLURM allocation: run it with --profile profiles/slurm"
            )
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            raise PointFailed(f"a {res['ranks']}-rank point needs an MPI launcher (mpirun); none on PATH")
        # --bind-to none: let each rank's OpenMP threads use all cores given to it. Root may run
        # MPI here (containers, CI); Open MPI refuses that unless told.
        launcher = [mpirun, "-n", str(res["ranks"]), "--bind-to", "none"]
        if os.geteuid() == 0:
            launcher.append("--allow-run-as-root")
    try:
        python = python_for(spec)
    except EnvironmentMissing as missing:
        raise PointFailed(str(missing)) from None
    return [*launcher, python, "-m", "snnbench.network.simulate", str(spec_path), str(rank_dir)]


def _hold_sigterm() -> None:
    """Inside a SLURM job, once the run has ended: SLURM stopping the job signals all its processes,
    maybe more than once, and SIGKILLs them KillWait seconds later; the record is written first."""
    if in_slurm_job():
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})


def _sigterm_follows(wait_s: float = 2.0) -> bool:
    """Inside a SLURM job, after a failed run: whether SLURM's SIGTERM (held) arrives within wait_s."""
    return in_slurm_job() and signal.sigtimedwait([signal.SIGTERM], wait_s) is not None


def _describe_exit(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name
        hint = " (the out-of-memory killer sends SIGKILL)" if name == "SIGKILL" else ""
        return f"killed by {name}{hint}"
    return f"exited with code {code}"


def _last_lines(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def run_child(command: list[str], log_path: Path, time_limit_s: float, threads: int) -> None:
    """Run the simulation; raise PointFailed if it does not finish cleanly in time."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
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
        raise PointFailed(f"simulation {_describe_exit(code)}; last log lines:\n{_last_lines(log_path)}")


def build_record(spec: dict, ranks: list[dict], senders, times, bounds: dict) -> dict:
    model = spec["model"]
    merged = record.merge_ranks(ranks)
    net = pd14.derive(model["neuron_scale"], model["indegree_scale"], model["input"])
    t_sim_s = model["t_sim_ms"] * 1e-3
    if model["record_spikes"]:
        stats = activity.population_stats(
            senders, times, ranks[0]["population_first_ids"], net.num_neurons.tolist(), model["t_sim_ms"]
        )
        reference = pd14.reference_rates(model["neuron_scale"], model["indegree_scale"], model["input"])
        verdict = activity.verdict(stats, bounds, reference)
        populations = stats
    else:
        verdict, populations = activity.unchecked("spikes not recorded (pd14.record_spikes: false)"), []
    spikes, events = race.spike_section(spec, ranks, populations, merged["num_synapses"], net.total_neurons)
    return {
        "phases_s": merged["phases_s"],
        "real_time_factor": merged["phases_s"]["simulate"] / t_sim_s,
        "simulator_timers_s": merged["simulator_timers_s"],
        "memory": merged["memory"],
        "network": {
            "num_neurons": net.total_neurons,
            "num_synapses": merged["num_synapses"],
            "expected_synapses": net.total_synapses,
        },
        "populations": populations,
        "activity": verdict,
        "spikes": spikes,
        "synaptic_events": events,
        "energy": energy.summarize([(r["host"], r["energy"]) for r in ranks if "energy" in r], energy.sacct_energy()),
        "simulator": {
            "name": spec["simulator"],
            "version": ranks[0]["simulator_version"],
            **ranks[0]["simulator_info"],
        },
        "ranks": ranks,
    }


def run_point(
    spec_path: Path, record_path: Path, spikes_path: Path, log_path: Path, bounds: dict, time_limit_s: float
) -> dict:
    start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text())
    rec = record.new(spec)
    senders, times = np.zeros(0, dtype=np.int64), np.zeros(0)
    # Ranks write their outputs beside the record, on storage every node of a multi-node job sees
    # (a node's /tmp is its own); the scratch folder goes once they are merged.
    rank_dir = Path(record_path).parent / ".ranks"
    shutil.rmtree(rank_dir, ignore_errors=True)
    rank_dir.mkdir(parents=True)
    try:
        try:
            command = launch_command(spec, Path(spec_path), rank_dir)
            try:
                threads = spec["resources"]["threads_per_rank"]
                run_child(command, Path(log_path), time_limit_s, threads)
            finally:
                _hold_sigterm()
            rank_files = sorted(rank_dir.glob("rank*.json"))
            ranks = [json.loads(f.read_text()) for f in rank_files]
            if len(ranks) != spec["resources"]["ranks"]:
                raise PointFailed(f"expected {spec['resources']['ranks']} rank outputs, found {len(ranks)}")
            senders, times = record.merge_spikes(sorted(rank_dir.glob("rank*.npz")))
            rec.update(build_record(spec, ranks, senders, times, bounds))
            # This process's own peak too: SLURM's memory limit covers it beside the ranks.
            rec["memory"]["wrapper_peak_rss_mb"] = process_mb("VmHWM")
            rec["status"] = "ok"
        except PointFailed as failure:
            rec["failure"] = {"reason": str(failure)}
            if _sigterm_follows():
                # SLURM is stopping the job, and its ranks went first (srun ends when a node is lost).
                terminated = Terminated(signal.SIGTERM)
                rec["failure"]["reason"] = f"terminated by {terminated} from SLURM ({slurm_stop_reason()}); {failure}"
                _finish(rec, start, spikes_path, record_path, log_path, senders, times)
                sys.exit(128 + terminated.signum)
        except Terminated as terminated:
            if not in_slurm_job():
                # Ctrl-C or a stopped workflow: no record, so the point is redone on resume.
                sys.exit(128 + terminated.signum)
            # SLURM cancelled the job, ran out of its time or lost one of its nodes. Snakemake
            # counts the job as failed; with keep-incomplete (profiles/slurm) this record stays as
            # the evidence and the point is redone on the next run.
            rec["failure"] = {"reason": f"terminated by {terminated} from SLURM ({slurm_stop_reason()})"}
            _finish(rec, start, spikes_path, record_path, log_path, senders, times)
            sys.exit(128 + terminated.signum)
    finally:
        shutil.rmtree(rank_dir, ignore_errors=True)
    _finish(rec, start, spikes_path, record_path, log_path, senders, times)
    return rec


def _finish(rec, start, spikes_path, record_path, log_path, senders, times) -> None:
    np.savez_compressed(spikes_path, senders=senders, times_ms=times)
    rec["wall_time_s"] = time.perf_counter() - start  # all of this step but writing the record itself
    record.write(rec, Path(record_path))
    with open(log_path, "a") as log:
        log.write(
            f"[snnbench] status {rec['status']}" + (f": {rec['failure']['reason']}\n" if rec["failure"] else "\n")
        )
