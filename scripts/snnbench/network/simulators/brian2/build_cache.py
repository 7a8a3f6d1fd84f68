"""The build cache: standalone builds are kept outside the repository, one directory per key, and
reused across seeds (everything seed-dependent is data the binary reads at start-up)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import sys
from importlib import metadata
from pathlib import Path

from snnbench.network import models
from snnbench.network.simulators.brian2.devices import Device
from snnbench.records.provenance import package_versions

# Where standalone builds are kept between points.
CACHE_ENV = "SNNBENCH_BUILD_CACHE"

# Simulator options that change the generated code, by Brian2 device.
CODE_OPTIONS = {
    "runtime": (),
    "cpp_standalone": (),
    "genn": ("delay_bins",),
    "cuda_standalone": ("cuda_compute_capability",),
}


def build_key(spec: dict, device: Device, versions: dict) -> str:
    """What a standalone build depends on: everything but the seed (the network's random data is
    read by the binary at start-up, not compiled in)."""
    # Numbers as floats: 100 (YAML) and 100.0 (Python) are the same model.
    model = {
        k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in spec["model"].items()
    }
    key = {
        "simulator": spec["simulator"],
        "model": model,
        "threads": spec["resources"]["threads_per_rank"],
        # Options that change the generated code: delay bins make Synapses objects on GeNN only
        # (elsewhere binned delays are data), the compute capability is compiled in.
        "options": {
            k: v for k, v in spec.get("simulator_options", {}).items() if k in CODE_OPTIONS[device.brian_device]
        },
        "versions": versions,
        "python": sys.version,
        # The environment by its content, not its path: checkouts with equal environments share a
        # build. The path appears in the generated makefile only as search folders (-I, -L, rpath);
        # the binary needs no library from the environment, and a second checkout's regenerated
        # makefile leaves the compiled objects up to date (Brian2 rewrites only changed sources).
        "environment": environment_content(),
        # Brian2 compiles with -march=native on the node that runs the point, and the cache is shared by
        # the nodes of a cluster: a binary for one CPU may stop another with an illegal instruction.
        "cpu": cpu_target(),
    }
    if spec.get("model_name", models.DEFAULT) != models.DEFAULT:  # another model with the same block: another build
        key["model_name"] = spec["model_name"]
    if device.binned_delays:
        key["seed"] = spec["seed"]  # bin sizes depend on the seed
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def environment_content() -> str:
    """A hash of every distribution installed in this environment, with its version."""
    installed = sorted({(d.metadata["Name"].lower(), d.version) for d in metadata.distributions()})
    # snnbench itself (editable, from the checkout) is not part of the generated code.
    installed = [item for item in installed if item[0] != "snnbench"]
    return hashlib.sha256(json.dumps(installed).encode()).hexdigest()[:16]


# The lines of /proc/cpuinfo that say what -march=native compiles for (x86's, then Arm's).
CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "flags")
CPU_FIELDS += ("CPU implementer", "CPU architecture", "CPU variant", "CPU part", "Features")


def cpu_target(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """A hash of the CPU's model and instruction set extensions (the first processor's), as GCC's
    -march=native reads them; the machine type where /proc/cpuinfo is not readable."""
    try:
        first = cpuinfo.read_text().split("\n\n")[0]
    except OSError:
        return platform.machine()
    fields = {}
    for line in first.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in CPU_FIELDS:
            fields[name.strip()] = value.strip()
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "brian2"
    return Path(os.environ.get(CACHE_ENV, default))


def claim_build_dir(spec: dict, device: Device):
    """The point's build directory, locked for this process: (directory, open lock file)."""
    key = build_key(spec, device, package_versions(("brian2", "brian2genn", "brian2cuda")))
    directory = cache_root() / f"{spec['simulator']}-{key}"
    directory.mkdir(parents=True, exist_ok=True)
    # Points with the same build run one at a time: the data files of one seed must not be
    # overwritten by another's while its binary runs.
    lock = open(directory / ".lock", "w")  # noqa: SIM115 (held until the process exits)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return directory, lock


def newest_mtimes(directory: Path) -> dict[str, int]:
    """mtime of every object file and the binary of a build directory."""
    found = {}
    for pattern in ("**/*.o", "main", "main.exe"):
        for f in directory.glob(pattern):
            found[str(f.relative_to(directory))] = f.stat().st_mtime_ns
    return found
