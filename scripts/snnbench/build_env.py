"""Make one build's environment (rule build_environment): a virtual environment in the per-user
cache (snnbench.builds) with the build's requirements, and for a source tree a wheel built with
its CMake options; then its provenance in build.json, which marks the environment complete.

A failure (an unknown version, a CMake error) removes the half-made environment and raises
BuildFailed with a message that names the build; its points do not run, other builds' do.
"""

from __future__ import annotations

import datetime
import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from snnbench import builds

# Run in the new environment: the simulator's own account of itself (PyNEST's build_info).
PROBE = """
import json, sys
import nest
info = nest.GetKernelStatus("build_info")
keep = ("version", "have_mpi", "mpiexec", "threads_model", "host", "hostos", "hostcpu", "built", "prefix")
with open(sys.argv[1], "w") as f:
    json.dump({k: (v if isinstance(v, bool | int | float | str) else str(v)) for k, v in info.items() if k in keep}, f)
"""


class BuildFailed(RuntimeError):
    """The build's environment could not be made; the message names the build and says why."""


def _run(command: list[str], log, what: str, env: dict | None = None) -> None:
    log.write(f"[snnbench] {what}: {' '.join(command)}\n")
    log.flush()
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        raise BuildFailed(f"{what} failed (exit code {done.returncode})")


def _pip(prefix: Path) -> list[str]:
    return [str(prefix / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", "--no-input"]


def _build_source(build: dict, prefix: Path, log, threads: int) -> None:
    """A wheel from the source tree with the CMake options (as scripts/install_nest_mpi.sh builds
    the sdist), its CMake build folder kept in the environment for the compiler's record."""
    defines = [f"--config-settings=cmake.define.{k}={v}" for k, v in builds.cmake_options(build).items()]
    wheels = prefix / "wheel"
    command = [*_pip(prefix), "wheel", "--no-deps", "--no-build-isolation", *defines]
    command += [f"--config-settings=build-dir={prefix / 'cmake-build'}", "--wheel-dir", str(wheels), build["source"]]
    _run(
        command,
        log,
        "building a wheel from the source tree",
        env=dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(threads)),
    )
    _run(
        [*_pip(prefix), "install", "--quiet", "--no-deps", *map(str, wheels.glob("*.whl"))], log, "installing the wheel"
    )


def compiler(prefix: Path) -> str | None:
    """The C++ compiler of a source build, as CMake found it, with its version line."""
    cache = prefix / "cmake-build" / "CMakeCache.txt"
    if not cache.exists():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_CXX_COMPILER:"):
            path = line.split("=", 1)[1]
            try:
                version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
            except OSError:
                version = ""
            return f"{path}: {version.splitlines()[0] if version else 'version unknown'}"
    return None


def _provenance(build: dict, requirements: list[str], prefix: Path, started: float) -> dict:
    python = str(prefix / "bin" / "python")
    probe = prefix / "simulator.json"
    subprocess.run([python, "-c", PROBE, str(probe)], check=True, capture_output=True, timeout=300)
    freeze = subprocess.run([python, "-m", "pip", "freeze"], capture_output=True, text=True, check=True).stdout
    info = {
        "key": build["key"],
        "build": {k: v for k, v in build.items() if k not in ("key", "source_state", "requirements")},
        "requirements": requirements,
        "python": platform.python_version(),
        "simulator": json.loads(probe.read_text()),
        "pip_freeze": freeze.split(),
        "pip_freeze_sha256": hashlib.sha256(freeze.encode()).hexdigest()[:16],
        "made_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "make_time_s": round(time.perf_counter() - started, 1),
        "host": platform.node(),
    }
    if "source" in build:
        info["source_state"] = builds.source_state(build["source"])
        info["cmake"] = builds.cmake_options(build)
        info["compiler"] = compiler(prefix)
    return info


def make(build: dict, requirements: list[str], labels: list[str], log_path: Path, threads: int = 1) -> dict:
    """Make the environment of `build` unless the cache has it; returns its provenance."""
    prefix, marker = builds.directory(build), builds.marker(build)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    named = f"build {', '.join(labels)} ({build.get('pip') or build.get('source')}; environment {prefix})"
    with open(log_path, "a") as log, open(prefix.parent / f"{build['key']}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker per key, whichever checkout asks
        if marker.exists():
            log.write(f"[snnbench] {named}: already in the cache\n")
            return json.loads(marker.read_text())
        started = time.perf_counter()
        shutil.rmtree(prefix, ignore_errors=True)  # a half-made environment of an interrupted build
        try:
            _run([sys.executable, "-m", "venv", str(prefix)], log, "creating the environment")
            _run([*_pip(prefix), "install", "--quiet", *requirements], log, "installing " + " ".join(requirements))
            if "source" in build:
                _build_source(build, prefix, log, threads)
            info = _provenance(build, requirements, prefix, started)
            # The compiler is recorded: the CMake build folder (objects, ~300 MB) and the wheel can go.
            for folder in ("cmake-build", "wheel"):
                shutil.rmtree(prefix / folder, ignore_errors=True)
        except (BuildFailed, subprocess.SubprocessError, OSError) as error:
            shutil.rmtree(prefix, ignore_errors=True)
            message = f"{named}: {error}"
            log.write(f"[snnbench] {message}\n")
            raise BuildFailed(message) from None
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(info, indent=1) + "\n")
        os.replace(tmp, marker)
        log.write(f"[snnbench] {named}: made in {info['make_time_s']} s, {info['simulator'].get('version')}\n")
        return info
