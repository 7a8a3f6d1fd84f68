"""Which tool reads the site's modulefiles, Lmod (snnbench.machine.lmod) or Environment Modules
(snnbench.machine.tcl_modules), and the ways in for a module build that do not care which.

The tool is the one whose init ran in the shell that starts the workflow ($LMOD_CMD or $MODULES_CMD
set), else the first installed where its packages put it, Lmod first. Not a config key: the tool is
the site's, not the experiment's, and a config that names modules stays the same on a site with the
other tool. Jobs inherit the variables (the SLURM executor submits with --export=ALL), so a point
loads its modules with the tool that checked them.
"""

from __future__ import annotations

import os

from snnbench.machine.lmod import LMOD
from snnbench.machine.modules import ModulesError, Tool, python
from snnbench.machine.tcl_modules import ENVIRONMENT_MODULES

TOOLS = (LMOD, ENVIRONMENT_MODULES)

__all__ = ["TOOLS", "ModulesError", "detected", "load", "module_function", "python", "tool", "unavailable"]


def detected(environ=os.environ) -> Tool | None:
    """The site's tool: the one set up in this environment, else the first installed; None if neither."""
    initialized = [t for t in TOOLS if t.initialized(environ)]
    return next(iter(initialized or [t for t in TOOLS if t.installed(environ)]), None)


def tool(environ=os.environ) -> Tool:
    found = detected(environ)
    if found is None:
        tried = "; ".join(f"{t.name}: ${t.variable} or {', '.join(t.defaults)}" for t in TOOLS)
        hints = "; ".join(t.install for t in TOOLS)
        raise ModulesError(f"module builds need environment modules, and neither tool is here ({tried}): {hints}")
    return found


def unavailable(build: dict, environ=os.environ) -> str | None:
    """Why the build's modules cannot be loaded, in their order (Tool.unavailable); None if they can."""
    return tool(environ).unavailable(build, environ)


def load(build: dict, environ=os.environ) -> tuple[dict[str, str], dict]:
    """The environment with the build's modules loaded, and what was loaded (Tool.load)."""
    return tool(environ).load(build, environ)


def module_function(environ=os.environ) -> str | None:
    """`module` as the init of the tool set up in this environment defines it (a process started
    with modules loaded inherits their variables, not the shell's function); None where none is."""
    found = next((t for t in TOOLS if t.initialized(environ)), None)
    return found.function if found else None
