"""Every kind of file a run reads or writes: where it lives, what makes it and which function of the code reads or
checks it. A point's files come from the families' own declarations (`outputs`, `collected`, `statistics`); the
others (networks, the history, the source and environment caches, crates and archives) are declared here. The fault
matrix (tests/unit/test_fault_matrix.py) applies every fault to every kind listed by kinds(), and fails on a kind
without its row: a new kind of file cannot be added without saying what each fault does to it (docs/hardening.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from snnbench import families, paths


@dataclass(frozen=True)
class Kind:
    name: str  # the fault matrix's row: a point's file by its name, the others by what they are
    where: str  # its path pattern
    made_by: str  # the rule or command that writes it
    checked_by: str  # "module:function" that reads or checks it (before any job, or where it is read)

    def checker(self):
        module, function = self.checked_by.split(":")
        return getattr(importlib.import_module(module), function)


POINT = f"{paths.RESULTS}/{{experiment}}/{{point}}"
# A point's files checked before any job by the planning process, which sets a damaged one aside.
POINT_CHECK = "snnbench.planning.before_jobs:set_aside_damaged"
# The point's spec: configure_point writes it for every family (not one of a family's outputs).
SPEC = Kind("spec.json", f"{POINT}/spec.json", "rule configure_point", POINT_CHECK)

DESCRIPTION = paths.NETWORK_DESCRIPTION
OTHERS = (
    Kind("description.json", DESCRIPTION, "rule describe_network", "snnbench.records.inputs:description_problem"),
    Kind("network.npz", DESCRIPTION.replace("description.json", "network.npz"),
         "rule describe_network (with its description)", "snnbench.records.inputs:description_problem"),
    Kind("history table", "<history>/<machine>/<run>.parquet", "python -m snnbench.results.history add",
         "snnbench.results.history:known_records"),
    Kind("source archive", "$SNNBENCH_SOURCE_CACHE/<source>.tar.gz", "snnbench.environments.sources:fetch",
         "snnbench.environments.sources:locate"),
    Kind("environment made marker", "$SNNBENCH_ENV_CACHE/<key>/build.json", "rule build_environment",
         "snnbench.environments:linked_python"),
    Kind("environment link marker", ".venv-<name>/.installed", "rule link_environment",
         "snnbench.planning.before_jobs:set_aside_stale_links"),
    Kind("crate", f"{paths.CRATES_DIR}/{{experiment}}/ro-crate-metadata.json", "rule crate_experiment",
         "snnbench.results.crate_check:named_contexts"),
    Kind("archive", f"{paths.ARCHIVES_DIR}/{{experiment}}.tar.gz", "rule archive_experiment",
         "snnbench.results.archive:unpack"),
)  # fmt: skip


def point_kinds() -> list[Kind]:
    """A point's files of every family: its spec, then what its families declare (outputs, collected, statistics)."""
    made = {}
    for family in map(families.get, families.names()):
        for declared in ("outputs", "collected", "statistics"):
            for name in getattr(family, declared):
                made.setdefault(name, f"{family.name}'s {declared} (snnbench.run.family.Family.{declared})")
    return [SPEC, *(Kind(name, f"{POINT}/{name}", made[name], POINT_CHECK) for name in made)]


def kinds() -> list[Kind]:
    return [*point_kinds(), *OTHERS]
