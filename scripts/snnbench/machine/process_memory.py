"""This process's memory figures from /proc/self/status (Linux): the one reader of them (the machine's installed
memory is snnbench.machine.hardware.installed_memory)."""

from __future__ import annotations

from pathlib import Path


def process_mb(field: str) -> float:
    """A memory figure of this process in MB: VmRSS (resident now), VmHWM (peak resident set)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    raise KeyError(field)
