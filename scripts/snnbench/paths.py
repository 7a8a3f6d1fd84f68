"""Where things are: the repository, the schemas, and the one pattern of a point's directory.

Every point lives at `results/<experiment>/<point>`, where <point> is its family's pattern
(three named levels and the seed). The workflow's wildcard constraints, `make rerun-failed`'s
search and the families' paths are all derived from the patterns here and in the families.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENVS = REPO / "envs"
CONFIG_SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
RECORD_SCHEMA = REPO / "workflow" / "schemas" / "record.schema.yaml"

# The workflow's own config file (Snakefile's `configfile:`); experiment files go on top of it.
CONFIG = "config/config.yaml"
RESULTS = "results"
# The folders snnbench itself writes under results/ beside the experiments' own: an experiment named like one
# would share it (its crate in results/crates/crates/), so such names are refused (snnbench.planning.experiments).
ARCHIVES_DIR = RESULTS + "/archives"  # make archive: <experiment>.tar.gz
CRATES_DIR = RESULTS + "/crates"  # make crate: <experiment>/
IMPORTED_DIR = RESULTS + "/imported"  # the config's archives, unpacked: <archive>/
COMPARISONS_DIR = RESULTS + "/comparisons"  # the config's comparisons: <comparison>.png
DASHBOARD_DIR = RESULTS + "/dashboard"  # make dashboard's site
OWN_FOLDERS = tuple(
    folder.removeprefix(RESULTS + "/")
    for folder in (ARCHIVES_DIR, CRATES_DIR, IMPORTED_DIR, COMPARISONS_DIR, DASHBOARD_DIR)
)
# A network model's derived description (snnbench.network.models.base.NetworkModel.description_key).
NETWORK_DESCRIPTION = "networks/{model}/{description}/description.json"
# The workflow's pattern of a point directory; {point} is the family's part.
POINT = RESULTS + "/{experiment}/{point}"
FIELD = re.compile(r"\{(\w+)\}")


def scripts_on_path(environ: dict[str, str]) -> dict[str, str]:
    """environ with this checkout's scripts/ first on PYTHONPATH (its snnbench imports in an environment
    that does not install it), no empty entry left (one would put the working directory on the path)."""
    paths = (str(REPO / "scripts"), environ.get("PYTHONPATH"))
    return {**environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


# What a copy of a checkout leaves out at its top (environments, run data, Snakemake's state, git) and
# anywhere (caches, Hypothesis's examples: the tests write them while copies run). At the top only:
# scripts/snnbench/results is a package, not run data.
NOT_COPIED_AT_TOP = (".venv*", ".snakemake", RESULTS, "logs", "benchmarks", "networks", ".git")
NOT_COPIED = ("__pycache__", ".*_cache", ".hypothesis")


def copy_ignore(top: Path):
    """shutil.copytree's `ignore` for a copy of the checkout at `top` (see NOT_COPIED_AT_TOP)."""
    top = Path(top).resolve()

    def ignored(folder: str, names: list[str]) -> set[str]:
        patterns = NOT_COPIED + (NOT_COPIED_AT_TOP if Path(folder).resolve() == top else ())
        return {name for name in names if any(fnmatch.fnmatch(name, pattern) for pattern in patterns)}

    return ignored


def point_path(experiment: str, point: str) -> str:
    return POINT.format(experiment=experiment, point=point)


def point_log(point: str) -> str:
    """The execute job's log of a point (a path or the POINT pattern): logs/execute/<experiment>/<point>.log."""
    return f"logs/execute/{point.removeprefix(RESULTS + '/')}.log"


def point_benchmark(point: str) -> str:
    """Snakemake's benchmark of a point's execute job: benchmarks/execute/<experiment>/<point>.tsv."""
    return f"benchmarks/execute/{point.removeprefix(RESULTS + '/')}.tsv"


def pattern_regex(pattern: str, fields: dict[str, str]) -> str:
    """A regular expression matching what `pattern.format(...)` writes; each {field} matches
    its expression in `fields` (default: one path level)."""
    parts = FIELD.split(pattern)
    # split() alternates literal text and field names
    return "".join(
        re.escape(part) if i % 2 == 0 else f"(?:{fields.get(part, '[^/]+')})" for i, part in enumerate(parts)
    )


def pattern_glob(pattern: str) -> str:
    """A glob matching what `pattern.format(...)` writes (every field a `*`)."""
    return FIELD.sub("*", pattern)


def unwritable(folder: str) -> str | None:
    """The folder, or the nearest existing folder above it, where this user cannot create files
    (permissions, an immutable flag, a read-only file system, a file in the way); None if it can."""
    path = os.path.abspath(folder)
    while not os.path.exists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path) or not os.access(path, os.W_OK | os.X_OK):
        return os.path.relpath(path)
    return None
