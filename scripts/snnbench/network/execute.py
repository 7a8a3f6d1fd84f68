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
import sys
import time
from pathlib import Path

import numpy as np

from snnbench.environments import EnvironmentMissing, builds, toolchain
from snnbench.jsonfile import write_npz
from snnbench.machine import energy, hardware, interference, module_tools
from snnbench.machine.process_memory import process_mb
from snnbench.network import activity, binding, models, race, simulators
from snnbench.network.ranks import merge_ranks, merge_spikes
from snnbench.network.simulators import python_for
from snnbench.paths import scripts_on_path
from snnbench.records import identity, provenance, record
from snnbench.run import supervise
from snnbench.run.supervise import (
    PointFailed,
    Terminated,
    hold_sigterm,
    in_slurm_job,
    run_child,
    sigterm_follows,
    slurm_stop_reason,
)


def module_environment(spec: dict) -> tuple[dict[str, str] | None, dict | None]:
    """For a point of a module build: the environment with its modules loaded, in which this
    checkout's snnbench imports, and what was loaded (snnbench.machine.module_tools.load); for a point
    whose environment was built with the site's toolchain, with the toolchain loaded (the MPI it was
    built against: snnbench.environments.toolchain.of_point); else (None, None)."""
    build = spec.get("build")
    if build and builds.is_modules(build):
        wanted, named = build, f"build {build['name']}"
    else:
        try:
            wanted, named = toolchain.of_point(build, simulators.environment_for(spec)), "toolchain"
        except EnvironmentMissing:
            return None, None  # said where its Python is looked for (python_for)
    if not wanted:
        return None, None
    try:
        environ, loaded = module_tools.load(wanted)
    except module_tools.ModulesError as error:
        raise PointFailed(f"{named}: {error}") from None
    return scripts_on_path(environ), loaded


def launch_command(spec: dict, spec_path: Path, rank_dir: Path, environ: dict | None = None) -> list[str]:
    """The command that runs the point: its environment's Python for one rank, under an MPI
    launcher for more, with the launcher's options for the point's binding (snnbench.network.binding;
    environ: the point's environment where it is not this process's, a module build's)."""
    res = spec["resources"]
    launcher = []
    if res["ranks"] == 1 and in_slurm_job() and (environ is not None or binding.asked(spec) == binding.CORES):
        # One rank as a step of its own, bound as asked (the executor's step leaves binding to the
        # site's default), or of a module build (the site's NEST, built against its MPI): alone inside
        # the executor's step, the MPI library would join that step's PMIx as its task, and SLURM
        # cancels the step when the process ends (--overlap: the executor's step holds the CPUs).
        launcher = ["srun", "--overlap", "--nodes=1", "--ntasks=1", f"--cpus-per-task={res['threads_per_rank']}"]
        launcher += binding.srun_options(spec)
    elif res["ranks"] > 1 and in_slurm_job():
        # Ranks as tasks of this allocation, the same number on each node, bound as asked.
        launcher = [
            "srun",
            f"--nodes={res['nodes']}",
            f"--ntasks={res['ranks']}",
            f"--ntasks-per-node={res['ranks_per_node']}",
            f"--cpus-per-task={res['threads_per_rank']}",
            *binding.srun_options(spec),
        ]
    elif res["ranks"] > 1:
        launcher = mpirun_command(spec, environ)
    try:
        python = python_for(spec, environ=environ)
    except (EnvironmentMissing, module_tools.ModulesError) as missing:
        raise PointFailed(str(missing)) from None
    return [*launcher, python, "-m", "snnbench.network.run", str(spec_path), str(rank_dir)]


def mpirun_command(spec: dict, environ: dict | None) -> list[str]:
    """mpirun with the point's ranks and binding, on this machine."""
    res = spec["resources"]
    if res["nodes"] > 1:
        raise PointFailed(f"a {res['nodes']}-node point needs a SLURM allocation: run it with --profile profiles/slurm")
    mpirun = shutil.which("mpirun", path=(environ or os.environ).get("PATH"))
    if mpirun is None:
        raise PointFailed(f"a {res['ranks']}-rank point needs an MPI launcher (mpirun); none on PATH")
    try:
        options = binding.mpirun_options(spec, (hardware.tool_output([mpirun, "--version"]).splitlines() or [""])[0])
    except ValueError as error:
        raise PointFailed(str(error)) from None
    # Root may run MPI here (containers, CI); Open MPI refuses that unless told.
    return [mpirun, "-n", str(res["ranks"]), *options, *(["--allow-run-as-root"] if os.geteuid() == 0 else [])]


def _launch(spec: dict, spec_path: Path, rank_dir: Path, rec: dict) -> tuple[list[str], dict]:
    """The point's command and its environment (the OpenMP placement of its binding on this
    process's, or a module build's, with its modules' provenance in the record)."""
    environ, loaded = module_environment(spec)
    if loaded and builds.is_modules(spec.get("build") or {}):
        rec["provenance"]["build"]["modules"] = loaded
    elif loaded:
        rec["provenance"]["toolchain"] = loaded
    command = launch_command(spec, spec_path, rank_dir, environ)
    return command, binding.environment(spec, os.environ if environ is None else environ)


def launched_as(command: list[str], spec: dict) -> str:
    """How the ranks were started and placed, for the record: the launcher with its options (no
    Python, no files), and the OpenMP placement variables."""
    launcher = command[: command.index("-m") - 1] if "-m" in command else command
    started = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(launcher)) or "one process, no launcher"
    return f"{started}; " + " ".join(f"{k}={v}" for k, v in binding.OPENMP[binding.asked(spec)].items())


def build_record(spec: dict, ranks: list[dict], senders, times) -> dict:
    model, network_model = spec["model"], models.of_spec(spec)
    merged = merge_ranks(ranks)
    net = network_model.size(model)
    model_results = network_model.results(model, [r.get("model_results", {}) for r in ranks])
    t_sim_s = model["t_sim_ms"] * 1e-3
    populations = []  # measured here, judged at collect (snnbench.network.judging.plausibility)
    if model["record_spikes"]:
        populations = activity.population_stats(
            senders,
            times,
            ranks[0]["population_first_ids"],
            net.num_neurons.tolist(),
            model["t_sim_ms"],
            network_model.populations_of(model),
        )
    spikes, events = race.spike_section(spec, ranks, populations, merged["num_synapses"], net.total_neurons)
    return {
        "phases_s": merged["phases_s"],
        "phases_cpu_s": merged["phases_cpu_s"],
        "interference": interference.summary([(r["host"], r.get("interference") or {}) for r in ranks]),
        "real_time_factor": merged["phases_s"]["simulate"] / t_sim_s,
        "simulator_timers_s": merged["simulator_timers_s"],
        "memory": merged["memory"],
        "network": {
            "num_neurons": net.total_neurons,
            "num_synapses": merged["num_synapses"],
            "expected_synapses": net.total_synapses,
        },
        "populations": populations,
        "model_results": model_results,
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


def merge_into(
    rec: dict,
    spec: dict,
    ranks: list[dict],
    rank_dir: Path,
    point_dir: Path,
    launch: str,
    env_key: str | None,
):
    """The ranks' outputs (rank_dir) merged into the record: its figures, what the ranks ran (its
    benchmark_hash, with env_key: the key of the environment they ran in, None where not known), the
    binding the run got (launch: how the ranks were started), the hardware files beside it. Returns the spikes."""
    senders, times = merge_spikes(sorted(rank_dir.glob("rank*.npz")))
    rec["provenance"].update(identity.claim([rank.pop("identity", None) for rank in ranks], env_key))
    rec.update(build_record(spec, ranks, senders, times))
    rec["binding"] = binding.judge(binding.asked(spec), ranks, launch)
    bindings = [r["binding"] for r in ranks if "binding" in r]
    rec["hardware"] = hardware.write_nodes(rank_dir, bindings, point_dir)
    return senders, times


def run_point(
    spec_path: Path,
    record_path: Path,
    spikes_path: Path,
    log_path: Path,
    time_limit_s: float,
    spec: dict | None = None,
) -> dict:
    """Run the point (spec: its spec_path's content, where the caller has read it) and write its record."""
    start = time.perf_counter()
    spec = spec or json.loads(Path(spec_path).read_text())
    rec = record.new(spec)
    senders, times = np.zeros(0, dtype=np.int64), np.zeros(0)
    # Ranks write their outputs beside the record, on storage every node of a multi-node job sees
    # (a node's /tmp is its own); the scratch folder goes once they are merged.
    rank_dir = Path(record_path).parent / ".ranks"
    shutil.rmtree(rank_dir, ignore_errors=True)
    rank_dir.mkdir(parents=True)
    try:
        try:
            command, environ = _launch(spec, Path(spec_path), rank_dir, rec)
            try:
                threads = spec["resources"]["threads_per_rank"]
                run_child(command, Path(log_path), time_limit_s, threads, environ)
            finally:
                hold_sigterm()
            rank_files = sorted(rank_dir.glob("rank*.json"))
            ranks = [json.loads(f.read_text()) for f in rank_files]
            if len(ranks) != spec["resources"]["ranks"]:
                raise PointFailed(f"expected {spec['resources']['ranks']} rank outputs, found {len(ranks)}")
            launch = launched_as(command, spec)
            env_key = provenance.environment_key(spec, simulators.environment_for(spec))
            senders, times = merge_into(rec, spec, ranks, rank_dir, Path(record_path).parent, launch, env_key)
            # This process's own peak too: SLURM's memory limit covers it beside the ranks.
            rec["memory"]["wrapper_peak_rss_mb"] = process_mb("VmHWM")
            rec["status"] = "ok"
        except PointFailed as failure:
            rec["failure"] = {"reason": str(failure)}
            if sigterm_follows():
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


def import_run(spec: dict, run_dir: Path, record_path: Path, spikes_path: Path, log_path: Path) -> dict:
    """The record of a point whose ranks ran outside the workflow (`python -m snnbench.network.run
    SPEC DIR` on another machine, snnbench.results.import_runs) from what they left in run_dir: ok where every
    rank wrote its outputs, else failed with the last line of run_dir/log.txt."""
    start = time.perf_counter()
    rec = record.new(spec)
    ranks = [json.loads(f.read_text()) for f in sorted(Path(run_dir).glob("rank*.json"))]
    first = ranks[0] if ranks else {}
    environment = first.get("simulator_info", {}).get("environment")
    rec["provenance"] = provenance.ran_elsewhere(rec["provenance"], run_dir, first.get("host"), environment)
    senders, times = np.zeros(0, dtype=np.int64), np.zeros(0)
    if len(ranks) == spec["resources"]["ranks"]:
        launch = "not recorded: the ranks ran outside the workflow"
        # None: the ranks ran in an environment of another machine, which this process cannot name.
        senders, times = merge_into(rec, spec, ranks, Path(run_dir), Path(record_path).parent, launch, None)
        rec["status"] = "ok"
    else:
        found = f"{len(ranks)} of {spec['resources']['ranks']} rank outputs"
        rec["failure"] = {"reason": f"the run left {found}; {supervise.run_end(run_dir)}"}
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    _finish(rec, start, spikes_path, record_path, log_path, senders, times)
    return rec


def _finish(rec, start, spikes_path, record_path, log_path, senders, times) -> None:
    write_npz(spikes_path, senders=senders, times_ms=times)
    rec["wall_time_s"] = time.perf_counter() - start  # all of this step but writing the record itself
    record.write(rec, Path(record_path))
    with open(log_path, "a") as log:
        log.write(
            f"[snnbench] status {rec['status']}" + (f": {rec['failure']['reason']}\n" if rec["failure"] else "\n")
        )
