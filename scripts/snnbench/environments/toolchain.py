"""The site's toolchain for what snnbench compiles: a `source` build's and NEST with MPI's (envs/nest-mpi.yaml).

A toolchain is the site's environment modules for compiler, MPI, CMake and libraries, loaded in order after
`module purge` (snnbench.machine.module_tools): a `source` build names them as `toolchain` (with its
`modulepath`), NEST with MPI takes the site's from $SNNBENCH_TOOLCHAIN (module names separated by spaces;
folders in $SNNBENCH_TOOLCHAIN_MODULEPATH), a machine fact as the tool that reads modulefiles is. The
modules are part of the environment's key (another MPI is another build) and of its provenance.

What a build needs is checked by the tools and files themselves, wherever they come from (modules, the
system, a user's own install): mpicc and mpicxx, cmake, a C++ compiler, GSL by `pkg-config gsl` or
`gsl-config`. What is missing is named in one line; Debian packages are installed only by root on Debian,
and only for what nothing else provides.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from snnbench.machine import module_tools, modules

VARIABLE = "SNNBENCH_TOOLCHAIN"
PATH_VARIABLE = "SNNBENCH_TOOLCHAIN_MODULEPATH"
# The Debian packages that provide each need, installed only where nothing else does.
DEBIAN = {
    "mpicc": ("openmpi-bin", "libopenmpi-dev"),
    "cmake": ("cmake", "ninja-build"),
    "c++": ("g++",),
    "gsl": ("libgsl-dev",),
}
SAID = {
    "mpicc": "mpicc and mpicxx (an MPI's compiler wrappers)",
    "cmake": "cmake",
    "c++": "a C++ compiler (c++, g++ or $CXX)",
    "gsl": "GSL (pkg-config gsl, or gsl-config)",
}


class ToolchainMissing(RuntimeError):
    """What a build needs and finds nowhere, in one line."""


def of(build: dict) -> dict | None:
    """The toolchain of a build or an environment's definition: {modules, modulepath}, None if it names none.
    (A `source` build names `toolchain: [...]` beside `modulepath`; a definition holds the dict itself.)"""
    named = build.get("toolchain")
    if not named:
        return None
    if isinstance(named, dict):
        return named
    return {"modules": list(named), "modulepath": modules.folders(build)}


def of_site(environ=os.environ) -> dict | None:
    """The site's toolchain for NEST with MPI ($SNNBENCH_TOOLCHAIN), None where it is not set."""
    names = environ.get(VARIABLE, "").split()
    if not names:
        return None
    folders = [f for f in environ.get(PATH_VARIABLE, "").split(os.pathsep) if f]
    return {"modules": names, "modulepath": modules.folders({"modulepath": folders})}


def of_point(build: dict | None, environment: str) -> dict | None:
    """The toolchain a point's environment was built with, which it runs with too (its MPI's libraries and
    launcher): its `source` build's, or for an environment with an install step (nest-mpi) the site's."""
    from snnbench import environments

    if build:
        return of(build)
    return of_site() if environment in environments.INSTALL_SCRIPTS else None


def loaded(toolchain: dict | None, environ=os.environ) -> tuple[dict[str, str], dict]:
    """The environment a build runs in, with the toolchain's modules loaded (the environment as it is
    without one), and what was loaded (snnbench.machine.modules.Tool.load; {} without one)."""
    if not toolchain:
        return dict(environ), {}
    env, facts = module_tools.load(toolchain, environ)
    return env, {"modules": toolchain["modules"], **facts, "id": identity(facts)}


def identity(facts: dict) -> str:
    """A short name of what the modules resolved to (their full names, not where their files lie), so
    that a build cache keyed by it is shared by every tree of the same modules."""
    return hashlib.sha256(" ".join(facts.get("loaded", [])).encode()).hexdigest()[:8]


def needs(mpi: bool, gsl: bool) -> list[str]:
    """What a NEST build needs: CMake and a C++ compiler; MPI's wrappers with MPI; GSL where asked."""
    return ["cmake", "c++", *(["mpicc"] if mpi else []), *(["gsl"] if gsl else [])]


def _which(name: str, env: dict) -> str | None:
    return shutil.which(name, path=env.get("PATH", ""))


def _output(command: list[str], env: dict) -> str | None:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def found(need: str, env: dict) -> str | None:
    """Where a need is met in the environment `env` (a path, or how GSL was found), None where it is not."""
    if need == "mpicc":
        wrappers = _mpi_wrappers(env)
        return " ".join(wrappers.values()) if all(wrappers.values()) else None
    if need == "c++":
        return next(filter(None, (_which(c, env) for c in (env.get("CXX", ""), "c++", "g++") if c)), None)
    if need == "gsl":
        version = _which("pkg-config", env) and _output(["pkg-config", "--modversion", "gsl"], env)
        if version:
            return f"pkg-config gsl {version}"
        version = _which("gsl-config", env) and _output(["gsl-config", "--version"], env)
        return f"{_which('gsl-config', env)} {version}" if version else None
    return _which(need, env)


def _mpi_wrappers(env: dict) -> dict[str, str | None]:
    """An MPI's C and C++ compiler wrappers on the environment's PATH, by CMake's names (None where missing)."""
    return {"MPI_C_COMPILER": _which("mpicc", env), "MPI_CXX_COMPILER": _which("mpicxx", env) or _which("mpic++", env)}


def mpi_defines(env: dict) -> dict[str, str]:
    """The MPI wrappers the build checked, for CMake: FindMPI looks beside the C++ compiler before PATH, so
    without them Debian's /usr/bin/mpicxx would win over a module's wrappers first on PATH."""
    return {k: v for k, v in _mpi_wrappers(env).items() if v}


def _debian_root() -> bool:
    return os.geteuid() == 0 and Path("/etc/debian_version").exists() and shutil.which("apt-get") is not None


def ensure(wanted: list[str], env: dict, log) -> dict[str, str]:
    """Each need met, by where it was found; the Debian packages of those nothing provides, where this is
    root on Debian. Raises ToolchainMissing naming what is missing, in one line."""
    where = {need: found(need, env) for need in wanted}  # each looked for once: GSL's asks pkg-config
    lacking = [need for need, there in where.items() if not there]
    if lacking and _debian_root():
        packages = [p for need in lacking for p in DEBIAN[need]]
        log.write(f"[snnbench] not found: {', '.join(lacking)}; installing Debian's {' '.join(packages)}\n")
        log.flush()
        apt = dict(env, DEBIAN_FRONTEND="noninteractive")
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
            subprocess.run(command, env=apt, stdout=log, stderr=subprocess.STDOUT, check=False)
        where.update({need: found(need, env) for need in lacking})
        lacking = [need for need, there in where.items() if not there]
    if lacking:
        what = ", ".join(SAID[need] for need in lacking)
        raise ToolchainMissing(
            f"not found: {what} (PATH={env.get('PATH', '')}): load the site's modules for them (a source build's "
            f"`toolchain`, ${VARIABLE} for nest-mpi) or install them; as root on Debian snnbench installs them"
        )
    return {need: str(there) for need, there in where.items()}
