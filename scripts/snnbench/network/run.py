"""Run one scaling point in this process (one MPI rank): `python -m snnbench.network.run SPEC OUTDIR`.

Calls the backend's phases in order, times each call, and writes `rank<r>.json` (times,
simulator timers, memory, counts, what the rank ran: snnbench.records.identity) and `rank<r>.npz`
(the rank's spikes) into OUTDIR. The parent process (`snnbench.network.execute`) merges the ranks
into the point's record.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from snnbench.jsonfile import write_npz
from snnbench.machine import affinity, energy, hardware, interference
from snnbench.machine.process_memory import process_mb
from snnbench.network import models
from snnbench.network.phases import PHASES
from snnbench.network.simulators import get_builder
from snnbench.records import identity


def run(spec: dict, outdir: Path) -> Path:
    # The CPUs the launcher gave this rank, before the simulator's OpenMP runtime binds its main thread.
    launch_cpus = sorted(os.sched_getaffinity(0))
    backend = get_builder(spec["simulator"], spec.get("model_name", models.DEFAULT))(spec)
    # Energy counters are read at every phase boundary, outside the timed calls; so are the
    # threads' CPUs around the simulate phase (where each may run, where it ran, what it did).
    meter = energy.Meter(*energy.machine_sensors(bool(spec["resources"].get("gpus"))))
    phases_s, cpu_s, rss_mb, timers, threads, window = timed_phases(backend, meter, launch_cpus)
    phases_s = backend.phase_split(phases_s)
    out = backend.output()

    # The simulator's timers are cumulative; report what each phase added.
    simulator_timers = {}
    previous = {}
    for phase in PHASES:
        delta = {k: v - previous.get(k, 0.0) for k, v in timers[phase].items()}
        simulator_timers[phase] = {k: v for k, v in delta.items() if v > 0}
        previous = timers[phase]

    outdir.mkdir(parents=True, exist_ok=True)
    # After the timed phases, so that gathering (lstopo, ldd, ...) delays no rank's measurement.
    hardware.write_node(outdir, backend.libraries())
    write_npz(outdir / f"rank{out.rank}.npz", senders=out.spike_senders, times_ms=out.spike_times_ms)
    rank_record = {
        "rank": out.rank,
        "num_ranks": out.num_ranks,
        "threads": out.threads,
        "host": socket.gethostname(),
        "phases_s": phases_s,
        "phases_cpu_s": cpu_s,
        # Who else used this rank's CPUs during simulate (snnbench.machine.interference).
        "interference": window,
        "rss_after_phase_mb": rss_mb,
        "peak_rss_mb": process_mb("VmHWM"),
        "simulator_timers_s": simulator_timers,
        "local_synapses": out.local_synapses,
        "population_first_ids": out.population_first_ids,
        "local_spikes": int(out.spike_senders.size),
        "spike_counter": out.spike_counter,
        "energy": meter.report(),
        "simulator_version": out.simulator_version,
        "simulator_info": out.simulator_info,
        "model_results": out.model_results,
        "binding": hardware.rank_binding(out.rank, launch_cpus, threads),
        # What this rank ran (the code it imported, the files it read): the record's benchmark_hash.
        "identity": identity.report(out.simulator_version),
    }
    path = outdir / f"rank{out.rank}.json"
    path.write_text(json.dumps(rank_record, indent=1))
    return path


def timed_phases(backend, meter, launch_cpus: list[int]) -> tuple:
    """Each phase called and timed: wall and CPU time, RSS and the simulator's timers after it; around simulate,
    the threads (where each may run, where it ran, what it did) and who else used the CPUs."""
    phases_s, cpu_s, rss_mb, timers, threads, window = {}, {}, {}, {"start": {}}, {}, {}
    for phase in PHASES:
        meter.mark(phase)
        if phase == "simulate":
            threads, started = affinity.threads(), interference.Window(launch_cpus)
        start, start_cpu = time.perf_counter(), time.process_time()
        getattr(backend, phase)()
        phases_s[phase] = time.perf_counter() - start
        cpu_s[phase] = time.process_time() - start_cpu  # every thread of this process: beside wall time
        if phase == "simulate":
            threads = affinity.ran_between(threads, affinity.threads())
            window = started.close(sum(t["cpu_s"] for t in threads), working_cpus(threads))
        rss_mb[phase] = process_mb("VmRSS")
        timers[phase] = backend.timers()
    meter.mark("end")
    return phases_s, cpu_s, rss_mb, timers, threads, window


def working_cpus(threads: list[dict]) -> list[int]:
    """The CPUs the threads that worked during simulate (a tenth of the busiest one's CPU time at least) were
    allowed on: where others' work slows the point down."""
    busiest = max((t["cpu_s"] for t in threads), default=0.0)
    return sorted({cpu for t in threads if t["cpu_s"] >= 0.1 * busiest for cpu in t["cpus"]})


def main(argv: list[str]) -> None:
    spec_path, outdir = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    run(spec, outdir)
    sys.stdout.flush()
    sys.stderr.flush()
    if spec["resources"]["ranks"] == 1:
        # Skip tearing down the network at interpreter exit (a measurable part of a point's
        # overhead at large scales); MPI runs exit normally so that MPI is finalized.
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
