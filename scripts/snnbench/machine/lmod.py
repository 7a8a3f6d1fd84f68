"""Environment modules (Lmod): a simulator build that the site provides as modules.

A build `{modules: [GCC/13, ParaStationMPI/5, NEST/3.9], modulepath: [...]}` has no environment to
make: its points run with those modules loaded, in the Python the modules put on PATH. The point's
wrapper loads them itself (load()), in a clean bash that runs Lmod's own command ($LMOD_CMD), and
starts the simulation in the environment that results; so it works alike on this machine and in a
SLURM job, and a module that fails to load fails the point with Lmod's words instead of running
whatever else is on PATH (which is what Snakemake's `envmodules:` does: docs/builds.md).

Whether every module exists is checked once, on the host that plans (unavailable()).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

from snnbench.machine.hardware import LMOD_MODULE_FUNCTION

# Debian's and most sites' Lmod; $LMOD_CMD (set by Lmod's init) wins.
LMOD_DEFAULT = "/usr/share/lmod/lmod/libexec/lmod"
TIMEOUT_S = 120

# In a clean bash: Lmod's `module` is `eval "$($LMOD_CMD bash ...)"`; a load that fails evaluates
# `false`, the script's exit status. Prints `module -t list` (Lmod writes it to stderr), a NUL,
# then the environment as `env -0` does.
_LOAD = f"""{LMOD_MODULE_FUNCTION}
module purge || exit 1
module load "$@" || exit 1
printf '%s\\0' "$("$LMOD_CMD" bash -t list 2>&1 >/dev/null)"
env -0
"""
_IS_AVAIL = """for m in "$@"; do
  eval "$("$LMOD_CMD" bash is-avail "$m")" || printf '%s\\n' "$m"
done
"""


class ModulesError(RuntimeError):
    """Modules that cannot be loaded here; the message names them and says why."""


def lmod_command() -> str | None:
    """Lmod's command: $LMOD_CMD, else Debian's path; None where Lmod is not installed."""
    command = os.environ.get("LMOD_CMD") or LMOD_DEFAULT
    return command if os.access(command, os.X_OK) else None


def no_lmod() -> str:
    return (
        f"module builds need Lmod: $LMOD_CMD is not set and {LMOD_DEFAULT} does not exist (source your site's "
        "Lmod init, e.g. /usr/share/lmod/lmod/init/bash, or install Lmod: apt-get install lmod)"
    )


def folders(build: dict) -> list[str]:
    """The build's own `modulepath` folders, absolute (relative ones from the working directory)."""
    return [os.path.abspath(os.path.expanduser(folder)) for folder in build.get("modulepath", [])]


def modulepath(build: dict, environ=os.environ) -> str:
    """Where Lmod looks for the build's modules: its `modulepath` folders before $MODULEPATH, as
    `module use` puts them."""
    searched = [*folders(build), *environ.get("MODULEPATH", "").split(":")]
    return ":".join(dict.fromkeys(f for f in searched if f))


def _bash(script: str, build: dict, environ=os.environ) -> subprocess.CompletedProcess:
    command = lmod_command()
    if command is None:
        raise ModulesError(no_lmod())
    env = dict(environ, LMOD_CMD=command, MODULEPATH=modulepath(build, environ))
    env.pop("BASH_ENV", None)  # nothing of the user's shell set-up: the modules alone
    try:
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-c", script, "bash", *build["modules"]],
            env=env,
            capture_output=True,
            timeout=TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ModulesError(f"Lmod ({command}) did not answer: {error}") from None


def unavailable(build: dict) -> list[str]:
    """The build's modules that Lmod cannot find (`module is-avail`) in its module path."""
    out = _bash(_IS_AVAIL, build)
    return out.stdout.decode().split()


def load(build: dict, environ=os.environ) -> tuple[dict[str, str], dict]:
    """The environment with the build's modules loaded (after `module purge`), and what was loaded:
    `module -t list`, every module's full name (name/version, dependencies included) and file, the
    module path, Lmod's version and the seconds loading took. Raises ModulesError."""
    start = time.perf_counter()
    out = _bash(_LOAD, build, environ)
    if out.returncode != 0:
        said = " ".join(out.stderr.decode(errors="replace").split())
        raise ModulesError(f"module load {' '.join(build['modules'])} failed: {said}")
    listed, *pairs = out.stdout.decode(errors="replace").split("\0")
    env = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
    loaded = [m for m in env.get("LOADEDMODULES", "").split(":") if m]
    missing = [m for m in build["modules"] if not any(f == m or f.startswith(m + "/") for f in loaded)]
    if missing:
        raise ModulesError(f"module load {' '.join(build['modules'])}: {', '.join(missing)} not loaded")
    facts = {
        "module_list": [line for line in listed.splitlines() if line.strip()],
        "loaded": loaded,
        "files": [f for f in env.get("_LMFILES_", "").split(":") if f],
        "modulepath": env.get("MODULEPATH", ""),
        "lmod_version": lmod_version(),
        "load_s": round(time.perf_counter() - start, 3),
    }
    return env, facts


def python(environ: dict[str, str]) -> str:
    """The Python that loaded modules put on PATH."""
    found = shutil.which("python3", path=environ.get("PATH", "")) or shutil.which(
        "python", path=environ.get("PATH", "")
    )
    if found is None:
        raise ModulesError(f"no python3 on PATH after loading the modules (PATH={environ.get('PATH', '')})")
    return found


def lmod_version() -> str | None:
    command = lmod_command()
    try:
        out = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired, TypeError):
        return None
    found = re.search(r"Version\s+([0-9][^\s]*)", out.stdout + out.stderr)
    return found.group(1) if found else None
