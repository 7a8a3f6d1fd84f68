"""Lmod, the Lua tool that reads modulefiles (Lua and Tcl ones), as a snnbench.machine.modules.Tool.

Its command is $LMOD_CMD, which Lmod's init exports, else Debian's and most sites' path; `module -t
list` prints one module a line. The other tool: snnbench.machine.tcl_modules.
"""

from __future__ import annotations

from snnbench.machine.modules import Tool

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
