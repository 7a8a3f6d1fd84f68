"""A point's identity from what its process ran: the code it imported and the input files it read.

Readers of files another rule made (an exported network, a multi-area description) call note_input
with the digest of the bytes they actually read; the point's identity and record take them from here.

The process that simulates (a network point's ranks, snnbench.network.run; the child of the
training and data families) reports at its end what it ran (report()): the digest of every module it
imported that is code of the benchmark, the inputs it read and the simulator's version. The parent
makes of those reports and the key of the environment the point ran in the record's benchmark_hash
(claim()): the same hash, the same benchmark, whatever the workflow's commit. Nobody lists the files:
a module counts because the process imported it.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from snnbench.hashing import canonical_hash, file_sha256

_INPUTS: dict[str, str] = {}

# Parts of snnbench that never decide what is simulated or how it is timed (where files go, facts of
# the machine, records, environments, planning, tables, figures): left out, so that a commit that
# touches only them keeps every identity. Everything else of snnbench the process imported counts.
OUTSIDE = (
    "snnbench.dev",
    "snnbench.environments",
    "snnbench.families",
    "snnbench.figures",
    "snnbench.hashing",
    "snnbench.jsonfile",
    "snnbench.machine",
    "snnbench.paths",
    "snnbench.planning",
    "snnbench.records",
    "snnbench.results",
    "snnbench.run",
    "snnbench.schemas",
    "snnbench.tables",
)
# A module whose file was removed before the process ended (a temporary copy): named, not read.
REMOVED = "removed before the process ended"
NOT_REPORTED = "not known: no process of the point reported what it ran (none started, or none reached its end)"
# Where installed packages live: their code is covered by the environment's key and the simulator's
# version, not by digests of its files.
_INSTALLED_PARTS = ("site-packages", "dist-packages")
# multiprocessing's name for the main module it re-ran (spawn's fix-up, e.g. brian2 compiling a cold Cython
# cache): the same module as __main__, which counts; counted under both, one benchmark would have two hashes.
MAIN_ALIAS = "__mp_main__"


def note_input(path: str, sha256: str) -> None:
    """Remember that this process read `path`, whose content has this SHA-256 (hex)."""
    _INPUTS[str(path)] = sha256


def inputs_read() -> dict[str, str]:
    """Every input file this process read (path -> SHA-256), in the order first read."""
    return dict(_INPUTS)


def _installed_roots() -> tuple[str, ...]:
    """The interpreter's standard library and package folders (not its prefix: a checkout may lie below it)."""
    paths = sysconfig.get_paths()
    roots = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    return tuple(os.path.join(os.path.realpath(root), "") for root in roots if root)


def _installed(file: str, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(file)
    return real.startswith(roots) or any(part in _INSTALLED_PARTS for part in Path(real).parts)


def _ours(name: str) -> bool:
    return name == "snnbench" or name.startswith("snnbench.")


def _left_out(name: str) -> bool:
    return any(name == part or name.startswith(part + ".") for part in OUTSIDE)


def _relative(name: str, file: str) -> str:
    """The module's path below its import root (snnbench/network/run.py): the same in every checkout."""
    if name == "__main__":
        return Path(file).name
    return name.replace(".", "/") + ("/__init__.py" if Path(file).name == "__init__.py" else ".py")


def code_modules(modules: dict | None = None) -> dict[str, str]:
    """Relative path -> SHA-256 of every module this process imported (modules: sys.modules) that is code
    of the benchmark: snnbench's wherever it is installed, less OUTSIDE, and any other Python source outside
    the interpreter's library and installed packages (a model registered from a site's own folder)."""
    roots, found = _installed_roots(), {}
    for name, module in list((sys.modules if modules is None else modules).items()):
        spec = getattr(module, "__spec__", None)
        # `python -m snnbench.network.run` runs the driver as __main__: known by its own name.
        name = spec.name if name == "__main__" and spec is not None else name
        file = getattr(module, "__file__", None)
        # torch.ops / torch.classes are namespaces whose __file__ is a bare name ("_ops.py"), no file.
        if not file or not file.endswith(".py") or not Path(file).is_absolute() or _left_out(name):
            continue
        if name == MAIN_ALIAS:
            continue
        if not _ours(name) and _installed(file, roots):
            continue
        # A temporary copy its runner removed before the end (INM-6's tree, run from a copy beside the
        # config.py it needs): its source is the environment's, which the environment's key covers.
        found[_relative(name, file)] = file_sha256(Path(file)) if Path(file).is_file() else REMOVED
    return dict(sorted(found.items()))


def report(simulator_version) -> dict:
    """What this process ran, for the parent's record: called at its end, once all it ran is imported
    (simulator_version: the simulator's own word for its version, any JSON value)."""
    return {"modules": code_modules(), "inputs": inputs_read(), "simulator_version": simulator_version}


def claim(reports: list[dict | None], environment_key: str | None) -> dict:
    """The record's provenance entries `benchmark_hash` and `identity` from the reports of the point's
    processes (one per rank, taken together; None: a process that reported nothing) and the key of the
    environment they ran in (None: not known, a run outside the workflow)."""
    reported = [r for r in reports if r]
    if not reported:
        return {"benchmark_hash": None, "identity": {"not_known": NOT_REPORTED}}
    covered = {
        "modules": dict(sorted({k: v for r in reported for k, v in r["modules"].items()}.items())),
        "inputs": {k: v for r in reported for k, v in r["inputs"].items()},
        "environment_key": environment_key,
        "simulator_version": reported[0]["simulator_version"],
    }
    # Inputs by content, not by path: the same files in another results folder are the same benchmark.
    hashed = {**covered, "inputs": sorted(set(covered["inputs"].values()))}
    return {"benchmark_hash": canonical_hash(hashed), "identity": covered}
