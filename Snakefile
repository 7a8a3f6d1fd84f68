# snnbench: benchmarks of spiking neuronal network simulators on the PD14 cortical microcircuit.
# configure -> execute -> validate -> collect -> analyze; the rules are in workflow/rules/, the logic in
# workflow/rules/common.smk and the Python package under scripts/snnbench/.
from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from snnbench.planning.campaign import unreadable

min_version("9.0")

# Snakemake's own message for a malformed config file names neither the file nor the line.
_unreadable = unreadable("config/config.yaml")
if _unreadable:
    raise WorkflowError("\n".join(_unreadable))


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/configure.smk"
include: "workflow/rules/builds.smk"
include: "workflow/rules/networks.smk"
include: "workflow/rules/execute.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/analyze.smk"
include: "workflow/rules/archive.smk"
include: "workflow/rules/race.smk"


localrules:
    all,


rule all:
    input:
        # A function, not its value: only a run aimed at `all` lists every point (a job does not).
        get_final_output,
