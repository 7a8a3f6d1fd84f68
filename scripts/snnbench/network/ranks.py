"""A network point's rank outputs merged into the record's figures.

Aggregation rules (one place): a phase takes as long as its slowest rank; memory is summed over
ranks (and the largest rank kept); synapses and spikes are summed. Each rank's own figures stay
in the record's `ranks` so nothing is lost by the aggregation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from snnbench.network.phases import PHASES


def merge_ranks(ranks: list[dict]) -> dict:
    """Merge per-rank results (dicts as written by snnbench.network.run) into point figures."""
    if not ranks:
        raise ValueError("no rank results to merge")
    ranks = sorted(ranks, key=lambda r: r["rank"])
    expected = ranks[0]["num_ranks"]
    if [r["rank"] for r in ranks] != list(range(expected)):
        raise ValueError(f"expected ranks 0..{expected - 1}, got {[r['rank'] for r in ranks]}")
    phases = {p: max(r["phases_s"][p] for r in ranks) for p in PHASES}
    phases["total"] = max(sum(r["phases_s"][p] for p in PHASES) for r in ranks)
    timers = {}
    for phase in PHASES:
        names = sorted({k for r in ranks for k in r["simulator_timers_s"].get(phase, {})})
        timers[phase] = {k: max(r["simulator_timers_s"].get(phase, {}).get(k, 0.0) for r in ranks) for k in names}
    peaks = [r["peak_rss_mb"] for r in ranks]
    timed = all("phases_cpu_s" in r for r in ranks)  # not in rank files of before 2026-11-28
    cpu = {p: sum(r["phases_cpu_s"][p] for r in ranks) for p in PHASES} if timed else {}
    return {
        "phases_s": phases,
        # CPU time per phase, summed over ranks (every thread's): the work, where wall time is the wait.
        "phases_cpu_s": cpu,
        "simulator_timers_s": timers,
        "memory": {"peak_rss_mb_sum": float(sum(peaks)), "peak_rss_mb_max_rank": float(max(peaks))},
        "num_synapses": int(sum(r["local_synapses"] for r in ranks)),
        "hosts": sorted({r["host"] for r in ranks}),
    }


def merge_spikes(rank_files: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    senders, times = [], []
    for f in rank_files:
        with np.load(f) as data:
            senders.append(data["senders"])
            times.append(data["times_ms"])
    if not senders:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate(senders), np.concatenate(times)
