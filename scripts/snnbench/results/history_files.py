"""The results history's files as files: its run tables read with those that do not read named (Damaged), adds
taking turns on a lock file in its folder (locked), files written through a temporary name (write_once)."""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path
from typing import NamedTuple

import pandas as pd

# The lock file adds take turns on, in the history's folder (hidden: neither a machine's folder nor a table).
LOCK = ".add.lock"


class Unusable(OSError):
    """A history folder that cannot be made or written (under /proc, below a file, read-only)."""


class Damaged(NamedTuple):
    path: Path
    problem: str

    def line(self, then: str) -> str:
        return f"{self.path} is damaged ({self.problem}); {then}"


def tables(root: Path, machine: str = "*", columns: list[str] | None = None) -> tuple[list[pd.DataFrame], list]:
    """The run tables of one machine (or all) as read, and those that do not read (Damaged)."""
    frames, damaged = [], []
    for path in sorted(Path(root).glob(f"{machine}/*.parquet")):
        try:
            frames.append(pd.read_parquet(path, columns=columns))
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError, its IO errors OSErrors
            damaged.append(Damaged(path, f"{type(error).__name__}: not a whole Parquet table"))
    return frames, damaged


@contextlib.contextmanager
def locked(root: Path):
    """The history's folder (made where missing), held by this process alone (flock on LOCK): adds take turns, so
    each sees the records the one before wrote. Raises Unusable where the folder cannot be made or written."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / LOCK, "w")
    except OSError as error:
        raise Unusable(error.errno, error.strerror) from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def write_once(path: Path, body) -> None:
    """Write through a temporary name, then rename: a reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    if isinstance(body, pd.DataFrame):
        body.to_parquet(temporary, index=False)
    else:
        temporary.write_bytes(body)
    temporary.replace(path)
