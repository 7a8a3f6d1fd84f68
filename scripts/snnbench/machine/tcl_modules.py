"""Environment Modules (4.7 on; 5 is current), the Tcl tool that reads Tcl modulefiles, as a
snnbench.machine.modules.Tool.

Its command is modulecmd.tcl: $MODULES_CMD, which its init exports (4.0 on), else where its packages
put it: under $MODULESHOME (its own install and Red Hat's), or Debian's and Ubuntu's /usr/lib. Its
`module -t list` heads the list with `Currently Loaded Modulefiles:` unless given no output
elements (`-o ''`, 4.7 on). The other tool: snnbench.machine.lmod.
"""

from __future__ import annotations

from snnbench.machine.modules import Tool

ENVIRONMENT_MODULES = Tool(
    key="environment-modules",
    name="Environment Modules",
    variable="MODULES_CMD",
    defaults=(
        "$MODULESHOME/libexec/modulecmd.tcl",
        "/usr/share/Modules/libexec/modulecmd.tcl",
        "/usr/lib/modulecmd.tcl",
    ),
    version_key="modules_version",
    list_options="-t -o ''",
    install="source your site's init, e.g. /usr/share/modules/init/bash, or apt-get install environment-modules",
)
