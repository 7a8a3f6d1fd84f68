"""Who else used a point's CPUs while it ran: the kernel's per-CPU counters (/proc/stat) read around a
phase, less the point's own threads' CPU time, and the hypervisor's steal time (a VM's CPUs taken by
other guests). What a noisy neighbour leaves behind where wall time alone cannot tell a slower code from
a busier machine (conbench and asv keep such conditions beside each result).

/proc/stat's `cpuN` lines count, per CPU, the time spent in each state since boot in USER_HZ ticks:
user nice system idle iowait irq softirq steal guest guest_nice (proc(5)); guest time is counted in user
too. Busy = user + nice + system + irq + softirq; steal apart. /proc/pressure/cpu (PSI, Linux 4.20+) says
how long some runnable task waited for a CPU, machine-wide (`some total=` in microseconds).
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

PROC = Path("/proc")
TICKS = os.sysconf("SC_CLK_TCK")
BUSY = (0, 1, 2, 5, 6)  # user nice system irq softirq, in a cpuN line's fields after its name
STEAL = 7


def cpu_ticks(cpus: list[int], proc: Path = PROC) -> dict[int, tuple[int, int]]:
    """(busy, steal) ticks since boot of each of `cpus` that /proc/stat lists."""
    found = {}
    for line in (proc / "stat").read_text().splitlines():
        name, *fields = line.split()
        if not name.startswith("cpu") or name == "cpu":
            continue
        cpu = int(name[3:])
        if cpu in cpus:
            values = [int(v) for v in fields] + [0] * 8  # older kernels list fewer states
            found[cpu] = (sum(values[i] for i in BUSY), values[STEAL])
    return found


def pressure_us(proc: Path = PROC) -> int | None:
    """Microseconds that some task waited for a CPU since boot (PSI), None where the kernel has no PSI."""
    try:
        for line in (proc / "pressure" / "cpu").read_text().splitlines():
            if line.startswith("some "):
                return int(dict(part.split("=") for part in line.split()[1:])["total"])
    except (OSError, KeyError, ValueError):
        return None
    return None


class Window:
    """The counters of a rank's CPUs over one phase: `Window(cpus)` at its start, `.close(own_cpu_s)` at its
    end with the CPU time the rank's own threads took in it."""

    def __init__(self, cpus: list[int], proc: Path = PROC):
        self.cpus, self.proc = sorted(cpus), proc
        self.started, self.children = time.perf_counter(), _children_cpu_s()
        self.ticks, self.pressure = self._read()

    def _read(self):
        try:
            return cpu_ticks(self.cpus, self.proc), pressure_us(self.proc)
        except OSError:  # no /proc (not Linux): nothing to say
            return {}, None

    def close(self, own_cpu_s: float, used: list[int] | None = None) -> dict:
        """{cpus, window_s, busy_s, own_cpu_s, others_cpu_s, steal_s, pressure_s} over the CPUs the rank's
        threads used (`used`, default all it was given): others_cpu_s is their busy time less the rank's own
        threads' and its children's (Brian2's standalone binary simulates in one), never below 0 (ticks round)."""
        wall = time.perf_counter() - self.started
        own_cpu_s += _children_cpu_s() - self.children
        ticks, pressure = self._read()
        wanted = self.cpus if not used else [cpu for cpu in self.cpus if cpu in used]
        shared = [cpu for cpu in wanted if cpu in ticks and cpu in self.ticks]
        if not shared:
            return {"cpus": self.cpus, "window_s": round(wall, 3), "measured": False}
        busy = sum(ticks[c][0] - self.ticks[c][0] for c in shared) / TICKS
        steal = sum(ticks[c][1] - self.ticks[c][1] for c in shared) / TICKS
        return {
            "cpus": shared,
            "measured": True,
            "window_s": round(wall, 3),
            "busy_s": round(busy, 3),
            "own_cpu_s": round(own_cpu_s, 3),
            "others_cpu_s": round(max(busy - own_cpu_s, 0.0), 3),
            "steal_s": round(steal, 3),
            "pressure_s": None if pressure is None or self.pressure is None else (pressure - self.pressure) / 1e6,
        }


def _children_cpu_s() -> float:
    """CPU time of this process's finished children (those waited for)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


# A point is disturbed where others took more than this share of its CPUs during simulate. Measured on a
# 2-core VM (docs/binding.md, "Noisy neighbours"): PD14 N = K = 0.1 on one core read 0.000-0.002 with every
# other process moved off it, 0.50 beside one CPU burner pinned to it.
DISTURBED_ABOVE = 0.1


def summary(windows: list[tuple[str, dict]]) -> dict:
    """The record's `interference`: others' share of the point's CPUs over simulate, the steal time summed over
    ranks, and the largest rank's CPU pressure (PSI is machine-wide: ranks of one node see the same)."""
    measured = [w for _, w in windows if w.get("measured")]
    pressures = [w["pressure_s"] for w in measured if w.get("pressure_s") is not None]
    return {
        "others_fraction": others_fraction(windows),
        "steal_s": round(sum(w["steal_s"] for w in measured), 3) if measured else None,
        "pressure_s": round(max(pressures), 3) if pressures else None,
    }


def disturbed(others: float | None) -> bool | None:
    """The one rule: disturbed where others took more than DISTURBED_ABOVE of the CPUs; None: not measured."""
    return None if others is None else bool(others > DISTURBED_ABOVE)


def others_fraction(windows: list[tuple[str, dict]]) -> float | None:
    """The share of the point's CPU capacity that others took while it ran ((host, window) of each rank):
    per host, the busy and steal time of each distinct set of CPUs (ranks left unbound share one set: it is
    counted once) less the CPU time of all the point's ranks there, over those CPUs x the window. None where
    nothing was measured."""
    by_host: dict[str, dict[tuple, list[dict]]] = {}
    for host, window in windows:
        if window.get("measured"):
            by_host.setdefault(host, {}).setdefault(tuple(window["cpus"]), []).append(window)
    others = capacity = 0.0
    for sets in by_host.values():
        busy = sum(_mean(ws, "busy_s") + _mean(ws, "steal_s") for ws in sets.values())
        own = sum(w["own_cpu_s"] for ws in sets.values() for w in ws)
        others += max(busy - own, 0.0)
        capacity += sum(len(cpus) * _mean(ws, "window_s") for cpus, ws in sets.items())
    return round(others / capacity, 4) if capacity > 0 else None


def _mean(windows: list[dict], key: str) -> float:
    return sum(w[key] for w in windows) / len(windows)
