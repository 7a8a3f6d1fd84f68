"""Environment modules: a simulator build that the site provides as modules, and the one interface
that both tools reading modulefiles offer (a Tool: Lmod, snnbench.machine.lmod; Environment Modules,
the Tcl one, snnbench.machine.tcl_modules; which one a site has: snnbench.machine.module_tools).

A build `{modules: [GCC/13, ParaStationMPI/5, NEST/3.9], modulepath: [...]}` has no environment to
make: its points run with those modules loaded, in the Python the modules put on PATH. The point's
wrapper loads them itself (Tool.load), in a clean bash that runs the tool's own command, and starts
the simulation in the environment that results; so it works alike on this machine and in a SLURM job,
and a module that fails to load fails the point with the tool's words instead of running whatever
else is on PATH (which is what Snakemake's `envmodules:` does: docs/builds.md).

Both tools are driven alike: `<command> bash <subcommand> ...` prints shell code that bash evaluates
(what their init's `module` function does). Whether every module exists is checked once, on the host
that plans (Tool.unavailable), the way they load: in order, each after those before it, since in a
hierarchy (EasyBuild's, say) a compiler's module adds the folder of the MPIs built with it.
"""

from __future__ import annotations

import os
import re
import shutil
import string
import subprocess
import time
from dataclasses import dataclass

TIMEOUT_S = 120

# In a clean bash, after `module purge`: each module asked for by `is-avail`, then loaded, so the
# next is looked for where the ones before it put it. Prints nothing when all load, else
# `missing|failed`, the module's index and the MODULEPATH it was looked for in, each after a NUL
# (after whatever a modulefile may have printed).
_CHECK = """module purge || exit 1
i=0
for m in "$@"; do
  module is-avail "$m" || { printf '\\0missing\\0%s\\0%s' "$i" "$MODULEPATH"; exit 0; }
  module load "$m" || { printf '\\0failed\\0%s\\0%s' "$i" "$MODULEPATH"; exit 0; }
  i=$((i + 1))
done
"""
# A load that fails evaluates `false`, the script's exit status. Prints `module -t list` (both tools
# write it to stderr), a NUL, then the environment as `env -0` does.
_LOAD = """module purge || exit 1
module load "$@" || exit 1
printf '%s\\0' "$("${variable}" bash {list_options} list 2>&1 >/dev/null)"
env -0
"""


class ModulesError(RuntimeError):
    """Modules that cannot be loaded here; the message names them and says why."""


def folders(build: dict) -> list[str]:
    """The build's own `modulepath` folders, absolute (relative ones from the working directory)."""
    return [os.path.abspath(os.path.expanduser(folder)) for folder in build.get("modulepath", [])]


def modulepath(build: dict, environ=os.environ) -> str:
    """Where the tool looks for the build's modules: its `modulepath` folders before $MODULEPATH, as
    `module use` puts them."""
    searched = [*folders(build), *environ.get("MODULEPATH", "").split(":")]
    return ":".join(dict.fromkeys(f for f in searched if f))


def python(environ: dict[str, str]) -> str:
    """The Python that loaded modules put on PATH."""
    found = shutil.which("python3", path=environ.get("PATH", "")) or shutil.which(
        "python", path=environ.get("PATH", "")
    )
    if found is None:
        raise ModulesError(f"no python3 on PATH after loading the modules (PATH={environ.get('PATH', '')})")
    return found


def _said(out: subprocess.CompletedProcess) -> str:
    return " ".join(out.stderr.decode(errors="replace").split())


@dataclass(frozen=True)
class Tool:
    """A tool that reads modulefiles, as this workflow uses it."""

    key: str  # its name in records: lmod | environment-modules
    name: str  # its name in messages
    variable: str  # what its init exports: the path of its command
    defaults: tuple[str, ...]  # where its packages put the command ($VARIABLE from the environment)
    version_key: str  # the record's key for its version
    list_options: str  # `module list` one module a line, no header
    install: str  # how to get it, for the message where it is missing

    @property
    def function(self) -> str:
        """`module` as the tool's init defines it, for a bash that has not sourced the init."""
        return f'module() {{ eval "$("${self.variable}" bash "$@")"; }}'

    def initialized(self, environ=os.environ) -> str | None:
        """The command where the tool's init ran in this environment (its variable set), else None."""
        command = environ.get(self.variable)
        return command if command and os.access(command, os.X_OK) else None

    def installed(self, environ=os.environ) -> str | None:
        """The command where the tool's packages put it, else None."""
        for default in self.defaults:
            path = string.Template(default).safe_substitute(environ)
            if "$" not in path and os.access(path, os.X_OK):
                return path
        return None

    def command(self, environ=os.environ) -> str | None:
        return self.initialized(environ) or self.installed(environ)

    def _bash(self, script: str, build: dict, environ=os.environ) -> subprocess.CompletedProcess:
        command = self.command(environ)
        if command is None:
            raise ModulesError(f"{self.name} is not installed here ({self.install})")
        env = dict(environ, MODULEPATH=modulepath(build, environ), **{self.variable: command})
        env.pop("BASH_ENV", None)  # nothing of the user's shell set-up: the modules alone
        try:
            return subprocess.run(
                ["bash", "--noprofile", "--norc", "-c", f"{self.function}\n{script}", "bash", *build["modules"]],
                env=env,
                capture_output=True,
                timeout=TIMEOUT_S,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise ModulesError(f"{self.name} ({command}) did not answer: {error}") from None

    def unavailable(self, build: dict, environ=os.environ) -> str | None:
        """Why the build's modules cannot be loaded in their order: the first that the tool cannot
        find (or load) after loading those before it, and where it looked; None if all load."""
        out = self._bash(_CHECK, build, environ)
        if out.returncode != 0:
            raise ModulesError(f"{self.name}: module purge failed: {_said(out)}")
        answer = out.stdout.decode(errors="replace").split("\0")
        if len(answer) < 4:
            return None
        status, index, searched = answer[-3:]
        module, before = build["modules"][int(index)], build["modules"][: int(index)]
        after = f" after module load {' '.join(before)}" if before else ""
        if status == "failed":
            return f"module {module} cannot be loaded{after}: {_said(out)}"
        return f"module {module} is not available{after} (MODULEPATH={searched or '(empty)'}; see `module avail`)"

    def load(self, build: dict, environ=os.environ) -> tuple[dict[str, str], dict]:
        """The environment with the build's modules loaded (after `module purge`), and what was loaded:
        the tool, `module -t list`, every module's full name (name/version, dependencies included) and
        file, the module path, the tool's version and the seconds loading took. Raises ModulesError."""
        start = time.perf_counter()
        script = _LOAD.replace("{variable}", self.variable).replace("{list_options}", self.list_options)
        out = self._bash(script, build, environ)
        if out.returncode != 0:
            raise ModulesError(f"module load {' '.join(build['modules'])} failed: {_said(out)}")
        listed, *pairs = out.stdout.decode(errors="replace").split("\0")
        env = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
        loaded = [m for m in env.get("LOADEDMODULES", "").split(":") if m]
        missing = [m for m in build["modules"] if not any(f == m or f.startswith(m + "/") for f in loaded)]
        if missing:
            raise ModulesError(f"module load {' '.join(build['modules'])}: {', '.join(missing)} not loaded")
        facts = {
            "tool": self.key,
            "module_list": [line for line in listed.splitlines() if line.strip()],
            "loaded": loaded,
            "files": [f for f in env.get("_LMFILES_", "").split(":") if f],
            "modulepath": env.get("MODULEPATH", ""),
            self.version_key: self.version(environ),
            "load_s": round(time.perf_counter() - start, 3),
        }
        return env, facts

    def version(self, environ=os.environ) -> str | None:
        """The tool's version (`<command> bash --version`: Lmod's `Version 8.6.19`, Environment
        Modules' `Release 5.2.0`)."""
        command = self.command(environ)
        if command is None:
            return None
        try:
            out = subprocess.run([command, "bash", "--version"], capture_output=True, text=True, timeout=TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = re.search(r"(?:Version|Release)\s+([0-9][^\s]*)", out.stdout + out.stderr)
        return found.group(1) if found else None
