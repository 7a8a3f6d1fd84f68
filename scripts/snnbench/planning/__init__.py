"""Planning: from config files to the campaign the rules run, once per run.

The one config reader (`read_config`) and the one planner (`plan`) for the workflow, `make
check-config`, the dev tools and the tests; the experiments' points (snnbench.planning.experiments);
what the host that plans does once before any job (snnbench.planning.before_jobs).
"""

from snnbench.planning.campaign import (
    Campaign,
    ConfigRefused,
    load,
    plan,
    plan_files,
    read_config,
    shown_path,
    unreadable,
)
from snnbench.planning.experiments import (
    ConfigError,
    build_labels,
    expand_points,
    experiment_named,
    problems,
    time_limit_s,
)

__all__ = [
    "Campaign",
    "ConfigError",
    "ConfigRefused",
    "build_labels",
    "expand_points",
    "experiment_named",
    "load",
    "plan",
    "plan_files",
    "problems",
    "read_config",
    "shown_path",
    "time_limit_s",
    "unreadable",
]
