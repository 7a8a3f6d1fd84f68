"""Lmod, the Lua tool that reads modulefiles (Lua and Tcl ones), as a snnbench.machine.modules.Tool.

Its command is $LMOD_CMD, which Lmod's init exports, else Debian's and most sites' path; `module -t
list` prints one module a line. The other tool: snnbench.machine.tcl_modules.
"""

from __future__ import annotations

import os

from snnbench.machine.modules import ModulesError, Tool, python

LMOD_DEFAULT = "/usr/share/lmod/lmod/libexec/lmod"

LMOD = Tool(
    key="lmod",
    name="Lmod",
    variable="LMOD_CMD",
    defaults=(LMOD_DEFAULT,),
    version_key="lmod_version",
    list_options="-t",
    install="source your site's Lmod init, e.g. /usr/share/lmod/lmod/init/bash, or apt-get install lmod",
)

# The point's wrapper (snnbench.network.execute) still loads through these names; the way in that
# does not care which tool the site has is snnbench.machine.module_tools.
__all__ = ["LMOD", "ModulesError", "load", "python"]


def load(build: dict, environ=os.environ) -> tuple[dict[str, str], dict]:
    return LMOD.load(build, environ)
