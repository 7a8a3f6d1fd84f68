"""The one GPU probe: which NVIDIA GPUs this process can use, without importing a GPU library.

Used by provenance (what a point ran on), by families that skip GPU points on machines without
one, and by devices that need a GPU. Under SLURM nvidia-smi sees the GPUs allocated to the job.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

FIELDS = ("index", "name", "driver_version", "memory.total", "uuid")


def gpus() -> list[dict] | None:
    """The GPUs nvidia-smi sees (model, driver, memory), or None without nvidia-smi or GPU."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, f"--query-gpu={','.join(FIELDS)}", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    rows = [dict(zip(FIELDS, (v.strip() for v in line.split(",")), strict=False)) for line in out.stdout.splitlines()]
    return [
        {
            "index": r["index"],
            "name": r["name"],
            "driver": r["driver_version"],
            "memory_mb": r["memory.total"],
            "uuid": r["uuid"],
        }
        for r in rows
    ] or None


def present() -> tuple[bool, str]:
    """Whether this machine shows an NVIDIA GPU, and how we know (or why not)."""
    proc = Path("/proc/driver/nvidia/gpus")
    if proc.is_dir() and any(proc.iterdir()):
        return True, "/proc/driver/nvidia/gpus lists a GPU"
    if gpus():
        return True, "nvidia-smi lists a GPU"
    return False, "no NVIDIA GPU on this machine (no /proc/driver/nvidia/gpus entry, nvidia-smi lists none)"


def memory_used_mb(index: int = 0) -> float | None:
    """Memory in use on one GPU now (whole device, MB), or None where it cannot be read."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", str(index)],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return float(out.stdout.split()[0])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None


class GpuMemoryPoller:
    """Peak GPU memory in use (nvidia-smi, whole device, MB) while a run lasts."""

    def __init__(self, period_s: float = 0.5):
        self.period_s, self.peak_mb, self._stop = period_s, None, threading.Event()
        self._smi = shutil.which("nvidia-smi")
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            used = memory_used_mb(0)
            if used is not None:
                self.peak_mb = used if self.peak_mb is None else max(self.peak_mb, used)
            self._stop.wait(self.period_s)

    def __enter__(self):
        if self._smi:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._smi:
            self._thread.join()
