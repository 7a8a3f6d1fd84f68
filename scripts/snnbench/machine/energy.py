"""Energy of a point's phases from the counters the machine offers, each labelled with what it covers.

Sources, read as cumulative counters at every phase boundary of the simulation process (no
sampling, no power integration: the difference of two counter readings is the energy in between):
- RAPL (Linux powercap, /sys/class/powercap/intel-rapl:*): energy of each CPU package and its
  DRAM, microjoules, wrapping at max_energy_range_uj;
- NVML (nvidia-ml-py): the total energy of each GPU since the driver loaded, millijoules;
- SLURM accounting (sacct ConsumedEnergyRaw, where the site enables acct_gather_energy): the
  energy of the job's finished steps, joules; whole steps, so all phases together.

Where no source answers, the record says "not measured" and why; nothing is ever estimated.
perun (PyPI) was considered and not used: it samples power in a monitor process around a whole
script or function and integrates it, writes its own HDF5 reports, and would have to be installed
in every simulator environment; the phases here need two counter readings each, read in-process.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

POWERCAP = Path("/sys/class/powercap")
# Phases summed into "construction" (network construction; the recipe keeps it apart).
CONSTRUCTION = ("setup", "create", "connect", "prepare")
UJ_PER_J = 1e6


@dataclass
class Sensor:
    """One cumulative energy counter: `read()` gives microjoules."""

    name: str  # e.g. rapl:package-0, rapl:package-0/dram, nvml:gpu0
    covers: str  # what the counter measures, in words
    source: str  # where it is read
    read: Callable[[], float]
    max_range_uj: float | None = None  # where the counter wraps (RAPL); None = does not wrap in practice


def _read_number(path: Path) -> float:
    return float(path.read_text().strip())


def rapl_sensors(root: Path = POWERCAP) -> tuple[list[Sensor], list[str]]:
    """The package and DRAM zones of RAPL under `root` (core/uncore zones lie inside the package
    and are left out so that nothing counts twice). Returns (sensors, reasons for none)."""
    root = Path(root)
    if not root.is_dir():
        return [], [f"RAPL: {root} absent (no powercap driver on this machine)"]
    sensors, problems = [], []
    for zone in sorted(root.glob("intel-rapl:*")):
        name_file = zone / "name"
        if not name_file.exists():
            continue
        name = name_file.read_text().strip()
        parent = zone.name.count(":") == 2  # intel-rapl:0:1 is a subzone of intel-rapl:0
        if not (name.startswith("package") or name == "dram"):
            continue
        package = (zone.parent / zone.name.rsplit(":", 1)[0] / "name") if parent else name_file
        label = package.read_text().strip() if package.exists() else zone.name
        energy = zone / "energy_uj"
        try:
            _read_number(energy)
        except OSError as error:
            problems.append(f"RAPL: {energy} not readable ({error.strerror}; root only on Linux >= 5.10)")
            continue
        covers = f"DRAM attached to CPU {label}" if name == "dram" else f"CPU {label} (cores, caches, uncore)"
        sensors.append(
            Sensor(
                name=f"rapl:{label}" + ("/dram" if name == "dram" else ""),
                covers=covers,
                source=str(energy),
                read=lambda f=energy: _read_number(f),
                max_range_uj=_read_number(zone / "max_energy_range_uj"),
            )
        )
    if not sensors and not problems:
        problems.append(f"RAPL: no package or DRAM zone under {root}")
    return sensors, problems


def nvml_sensors(nvml=None) -> tuple[list[Sensor], list[str]]:
    """One sensor per GPU that NVML sees (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver
    loaded; Volta and later). `nvml`: the pynvml module, or a fake for tests."""
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            return [], ["NVML: nvidia-ml-py not installed in the simulator's environment"]
    try:
        nvml.nvmlInit()
        count = nvml.nvmlDeviceGetCount()
    except Exception as error:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        return [], [f"NVML: no NVIDIA driver or GPU ({error})"]
    sensors, problems = [], []
    for index in range(count):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        model = nvml.nvmlDeviceGetName(handle)
        model = model.decode() if isinstance(model, bytes) else model
        try:
            nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        except Exception as error:
            problems.append(f"NVML: GPU {index} ({model}) has no energy counter ({error})")
            continue
        sensors.append(
            Sensor(
                name=f"nvml:gpu{index}",
                covers=f"GPU {index} ({model}), whole board",
                source="NVML nvmlDeviceGetTotalEnergyConsumption",
                read=lambda h=handle: 1e3 * float(nvml.nvmlDeviceGetTotalEnergyConsumption(h)),
            )
        )
    if not count:
        problems.append("NVML: no GPU")
    return sensors, problems


def machine_sensors(gpus: bool, root: Path = POWERCAP, nvml=None) -> tuple[list[Sensor], list[str]]:
    """Every counter this process can read: RAPL always tried; NVML where the point uses GPUs or
    NVML is handed in (tests)."""
    sensors, problems = rapl_sensors(root)
    if gpus or nvml is not None:
        found, why = nvml_sensors(nvml)
        sensors, problems = sensors + found, problems + why
    else:
        problems.append("NVML: the point uses no GPU")
    return sensors, problems


class Meter:
    """Counter readings at phase boundaries: mark(phase) before each phase, mark("end") after the last."""

    def __init__(self, sensors: list[Sensor], problems: list[str]):
        self.sensors, self.problems, self.marks = sensors, list(problems), []

    def mark(self, name: str) -> None:
        values = {}
        for sensor in self.sensors:
            try:
                values[sensor.name] = sensor.read()
            except Exception as error:  # a counter that stops answering mid-run
                values[sensor.name] = None
                self.problems.append(f"{sensor.name}: read failed at {name} ({error})")
        self.marks.append({"mark": name, "time_s": time.perf_counter(), "uj": values})

    def report(self) -> dict:
        """What a rank writes: the sensors, the readings, and why sources are missing."""
        sensors = [
            {"name": s.name, "covers": s.covers, "source": s.source, "max_range_uj": s.max_range_uj}
            for s in self.sensors
        ]
        return {"sensors": sensors, "marks": self.marks, "problems": self.problems}


def counter_delta_uj(before: float, after: float, max_range_uj: float | None) -> float:
    """after - before of a cumulative counter, across one wrap-around where it wraps."""
    delta = after - before
    if delta < 0:
        if not max_range_uj:
            raise ValueError(f"counter went back ({before} -> {after}) and does not wrap")
        delta += max_range_uj
    return delta


def phase_energy_j(report: dict) -> dict[str, dict[str, float | None]]:
    """sensor -> phase -> joules, from one rank's report (mark i starts phase i, the last ends it)."""
    marks, result = report["marks"], {}
    for sensor in report["sensors"]:
        name, phases = sensor["name"], {}
        for start, end in zip(marks, marks[1:], strict=False):
            a, b = start["uj"].get(name), end["uj"].get(name)
            delta = None if a is None or b is None else counter_delta_uj(a, b, sensor["max_range_uj"])
            phases[start["mark"]] = None if delta is None else delta / UJ_PER_J
        result[name] = phases
    return result


def _window_sum(phases: dict, names) -> float | None:
    values = [phases.get(p) for p in names]
    return None if any(v is None for v in values) else float(sum(values))


def summarize(rank_reports: list[tuple[str, dict]], slurm: dict | None = None) -> dict:
    """The record's `energy`: one reading per sensor and host (a host's first rank reads its
    node's counters; other ranks on it would count the same energy again), each with what it
    covers, and the construction, warm-up and simulation windows summed over readings."""
    seen, readings, problems = set(), [], []
    for host, report in rank_reports:
        problems += [p for p in report["problems"] if p not in problems]
        if host in seen:
            continue
        seen.add(host)
        for sensor in report["sensors"]:
            phases = phase_energy_j(report)[sensor["name"]]
            windows = {
                "construction_j": _window_sum(phases, CONSTRUCTION),
                "presimulate_j": phases.get("presimulate"),
                "simulate_j": phases.get("simulate"),
            }
            readings.append({"sensor": sensor["name"], "host": host, **sensor, "phases_j": phases, **windows})
    totals = {}
    for key in ("construction_j", "presimulate_j", "simulate_j"):
        values = [r[key] for r in readings]
        totals[key] = None if not values or None in values else float(sum(values))
    measured = bool(readings) and totals["simulate_j"] is not None
    return {
        "measured": measured,
        "not_measured": None if measured else "; ".join(problems) or "no energy counter",
        "problems": problems,
        "covers": " + ".join(f"{r['covers']} on {r['host']}" for r in readings) or None,
        "readings": readings,
        **(totals if measured else dict.fromkeys(totals)),
        "slurm": slurm,
    }


def sacct_energy(job_id: str | None = None, run=subprocess.run) -> dict:
    """Energy of the SLURM job's finished steps from its accounting (ConsumedEnergyRaw, J): whole
    steps (construction, warm-up, simulation, teardown together) of whole nodes, as the site's
    acct_gather_energy plugin measures them. Not measured outside a job or without the plugin."""
    job_id = job_id or os.environ.get("SLURM_JOB_ID")
    covers = "SLURM accounting (sacct ConsumedEnergyRaw): the job's finished steps, all phases, whole nodes"
    if not job_id:
        return {"measured": False, "reason": "not in a SLURM job", "covers": covers}
    try:
        out = run(
            ["sacct", "-j", job_id, "--format=JobID,ConsumedEnergyRaw", "--noheader", "--parsable2"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"measured": False, "reason": f"sacct failed ({error})", "covers": covers}
    steps = {}
    for line in out.stdout.splitlines():
        step, _, energy = line.partition("|")
        if "." in step and energy.strip().isdigit():  # steps only: the job line sums them
            steps[step] = int(energy)
    if not steps or not any(steps.values()):
        reason = "sacct reports no ConsumedEnergy for the job's steps (no acct_gather_energy plugin at this site)"
        return {"measured": False, "reason": reason, "covers": covers}
    return {"measured": True, "consumed_energy_j": float(sum(steps.values())), "steps_j": steps, "covers": covers}
