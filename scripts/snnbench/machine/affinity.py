"""Where a process's threads may run and where they ran, as the operating system sees them: each
thread's allowed CPUs (`Cpus_allowed_list` of /proc/<pid>/task/<tid>/status), the CPU it last ran
on (field 39 of .../stat), its CPU time and how often it was preempted (`nonvoluntary_ctxt_switches`),
and the core each CPU belongs to (/sys/devices/system/cpu/cpu<N>/topology). What a point's record
keeps of its binding; snnbench.network.binding judges it.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

PROC = Path("/proc")
SYS_CPU = Path("/sys/devices/system/cpu")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Fields of /proc/<pid>/task/<tid>/stat after the command name (the stat(5) field number - 3).
UTIME, STIME, LAST_CPU = 14 - 3, 15 - 3, 39 - 3


def parse_cpu_list(text: str) -> list[int]:
    """[0, 1, 2, 3, 8] for the kernel's list "0-3,8" (the inverse of snnbench.machine.hardware.cpu_list)."""
    cpus = []
    for part in text.strip().split(","):
        if part:
            first, _, last = part.partition("-")
            cpus += range(int(first), int(last or first) + 1)
    return cpus


def thread_state(task: Path) -> dict:
    """One thread's allowed CPUs, last CPU, CPU time (s) and preemptions so far."""
    stat = (task / "stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may hold spaces
    status = dict(line.split(":", 1) for line in (task / "status").read_text().splitlines() if ":" in line)
    return {
        "tid": int(task.name),
        "cpus": parse_cpu_list(status["Cpus_allowed_list"]),
        "last_cpu": int(fields[LAST_CPU]),
        "cpu_s": (int(fields[UTIME]) + int(fields[STIME])) / CLOCK_TICKS,
        "preempted": int(status.get("nonvoluntary_ctxt_switches", "0")),
    }


def threads(pid: int | str = "self") -> dict[int, dict]:
    """Every thread of a process (this one by default) by its thread id; a thread that ends while
    it is read is left out."""
    found = {}
    for task in (PROC / str(pid) / "task").iterdir():
        try:
            state = thread_state(task)
        except (OSError, KeyError, ValueError, IndexError):
            continue
        found[state["tid"]] = state
    return found


def ran_between(before: dict[int, dict], after: dict[int, dict]) -> list[dict]:
    """The threads alive at the end of an interval with what they did in it (CPU time, preemptions;
    a thread started in it counts from zero), their allowed CPUs and last CPU at its end, in order
    of creation (thread ids grow)."""
    ran = []
    for tid in sorted(after):
        start = before.get(tid, {"cpu_s": 0.0, "preempted": 0})
        state = after[tid]
        ran.append(
            {
                **state,
                "cpu_s": round(state["cpu_s"] - start["cpu_s"], 3),
                "preempted": state["preempted"] - start["preempted"],
            }
        )
    return ran


def core_of(cpu: int, sys_cpu: Path = SYS_CPU) -> str:
    """The core a CPU belongs to, `<package>:<core>`; the CPU's own number where the kernel does not
    say (a container without /sys), so that each CPU counts as a core of its own."""
    topology = sys_cpu / f"cpu{cpu}" / "topology"
    try:
        package = (topology / "physical_package_id").read_text().strip()
        core = (topology / "core_id").read_text().strip()
    except OSError:
        return f"cpu{cpu}"
    return f"{package}:{core}"


def cores(cpus, sys_cpu: Path = SYS_CPU) -> dict[int, str]:
    """The core of each CPU."""
    return {cpu: core_of(cpu, sys_cpu) for cpu in sorted(set(cpus))}


@functools.cache
def usable_cores() -> tuple[int, list[int]]:
    """The cores this process may run on (distinct cores among its CPUs), and those CPUs: read once."""
    cpus = sorted(os.sched_getaffinity(0))
    return len(set(cores(cpus).values())), cpus
