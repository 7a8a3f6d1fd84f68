"""Files a point reads that another rule made (a network's description and the data file it names, a
point's spec): checked cheaply before any job (snnbench.planning.before_jobs, through the point's family:
there, readable, of their kind, of the size recorded), and by their digest where a point reads them.
One that fails is set aside as <name>.damaged (never deleted) with one line naming it, and its rule
makes it again. A reader notes the digest of the bytes it read (snnbench.records.identity.note_input),
so that a record names what its point read, not what was meant to be there.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from snnbench.jsonfile import DAMAGED, DamagedFile
from snnbench.records import identity


class DamagedInput(DamagedFile):
    """A made file that cannot be read or is not what its maker recorded; the message is one line
    naming it, what is wrong and what happens. `path`: the file."""

    def __init__(self, message: str, path) -> None:
        super().__init__(message)
        self.path = str(path)


# Descriptions this process set aside while they stay in place (set_aside's `kept`): not read again here.
_KEPT_IN_PLACE: set[str] = set()
# Beside a description set aside in place: when and why (one line), the input that makes its rule run again.
SET_ASIDE_NOTE = ".set-aside"


def set_aside(paths, dry_run: bool, kept=None) -> str:
    """Rename each existing file of `paths` to <name>.damaged (a dry run renames none, and neither
    does a file another reader set aside first); the words that say what was done. `kept` (a rule's
    output) is copied instead and stays where it is until its rule makes it again: Snakemake runs again
    every job that reads a file it makes, finished or not, unless the job reads it as `ancient` and it
    is there when Snakemake plans. This process reads it no more (FileNotFoundError)."""
    present = [Path(p) for p in paths if Path(p).exists()]
    if dry_run:
        return "would be set aside"
    for path in present:
        aside = path.with_name(path.name + DAMAGED)
        try:
            if kept is not None and path == Path(kept) and path.is_file():  # a folder in its place: renamed
                shutil.copyfile(path, aside)
                _KEPT_IN_PLACE.add(os.path.realpath(path))
            else:
                path.replace(aside)
        except FileNotFoundError:
            continue  # another rank of the point set it aside first
    return "set aside as " + " and ".join(p.name + DAMAGED for p in present)


def _why(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg}: line {error.lineno}, column {error.colno}"
    return str(error)


def damaged(problem: str, files: list[Path], set_aside_now: bool) -> DamagedInput:
    """The error for a made file found damaged where it is read: set aside with `files` (what its rule
    writes with it) if set_aside_now (where a point reads it), else only named (where the workflow
    plans: a dry run must change nothing, and the run sets it aside before any job)."""
    if set_aside_now:
        return DamagedInput(f"{problem}; {set_aside(files, False)}, made again on the next run", files[0])
    return DamagedInput(f"{problem}; a run (not a dry run) sets it aside and makes it again", files[0])


def read_json(path, set_aside_damaged: bool = False) -> dict:
    """A made JSON file's content, the digest of the bytes read noted; DamagedInput (set aside first
    where set_aside_damaged) where it is not complete JSON. FileNotFoundError until it is made."""
    path = Path(path)
    if os.path.realpath(path) in _KEPT_IN_PLACE:
        raise FileNotFoundError(errno.ENOENT, "set aside, not made again yet", str(path))
    data = path.read_bytes()
    try:
        content = json.loads(data)
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise damaged(f"{path} is damaged ({_why(error)})", [path], set_aside_damaged) from None
    identity.note_input(str(path), hashlib.sha256(data).hexdigest())
    return content


@contextmanager
def verified(path, sha256: str, recorded_in: Path) -> Iterator[tuple[BinaryIO, str]]:
    """The made file `path` open for reading (at its start) and the SHA-256 of its bytes, once that is
    `sha256`, what its maker recorded in `recorded_in` (its description); the digest noted. Otherwise
    both files are set aside (its rule writes them together) and DamagedInput."""
    path = Path(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256()
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
        found = digest.hexdigest()
        if found != sha256:
            digests = f"sha256 {found[:16]}…, recorded {sha256[:16]}…"
            raise damaged(f"{path} is not the file {recorded_in.name} records ({digests})", [path, recorded_in], True)
        identity.note_input(str(path), found)
        f.seek(0)
        yield f, found


def description_problem(path, params: dict) -> tuple[str, list[Path]] | None:
    """What makes a derived description not what its points read, found cheaply (no digest): not
    complete JSON, derived from other parameters than `params` (its derivation's, where it records
    them), or a data file it names (`file`) missing, of another size than it records (`bytes`) or
    without a readable zip directory (an .npz); with the files to set aside (a data file goes with its
    description, which its rule writes last). None: nothing wrong, not made yet, or set aside here."""
    path = Path(path)
    if os.path.realpath(path) in _KEPT_IN_PLACE:
        return None  # set aside already, its rule makes it again
    try:
        content = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return f"{path} is damaged (a folder, not a file)", [path]
    except ValueError as error:
        return f"{path} is damaged ({_why(error)})", [path]
    if not isinstance(content, dict):
        return f"{path} is not a description (not a JSON object)", [path]
    # PD14's export records them as `params`, the multi-area derivation as `parameters` (others: not checked).
    recorded, planned = content.get("params", content.get("parameters")), json.loads(json.dumps(params))
    if not isinstance(recorded, dict):
        recorded = planned
    differ = sorted(k for k in {*recorded, *planned} if recorded.get(k) != planned.get(k))
    if differ:
        return f"{path} was derived from other parameters than its folder's ({', '.join(differ)} differ)", [path]
    if not isinstance(content.get("file"), str):
        return None
    data = path.parent / content["file"]
    problem = data_file_problem(data, content.get("bytes"))
    return (f"{data} {problem}", [data, path]) if problem else None


def data_file_problem(path: Path, size: int | None) -> str | None:
    """A description's data file missing, of another size than the `size` it records (None: not
    recorded) or, an .npz, without a readable zip directory (read from its end, not its data)."""
    try:
        found = path.stat().st_size
    except FileNotFoundError:
        return "is missing"
    if size is not None and found != size:
        return f"has {found} bytes where its description records {size}"
    return npz_problem(path) if path.suffix == ".npz" else None


def npz_problem(path, arrays=()) -> str | None:
    """An .npz without a readable zip directory (read from its end, not its data), or without the
    named `arrays`; None where it has both."""
    try:
        with zipfile.ZipFile(path) as archive:
            held = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as error:
        return f"is not a readable npz file ({error})"
    missing = [name for name in arrays if f"{name}.npy" not in held]
    return f"holds no array {', '.join(missing)}" if missing else None


def set_aside_damaged(problems: dict[str, tuple[str, list[Path]]], dry_run: bool) -> list[str]:
    """Set aside the files of each problem (description path -> description_problem's answer); one line
    each, also written beside the description (remade_trigger). The description stays in place
    (set_aside's `kept`) and its rule makes it again in this run: the points still to run read it after;
    finished points read it as `ancient` and are not redone (their records name the digest they read)."""
    lines = []
    for description, (problem, files) in problems.items():
        line = f"{problem}; {set_aside(files, dry_run, kept=description)}, made again before a point reads it"
        if not dry_run:
            stamp = datetime.datetime.now(datetime.UTC).isoformat()
            Path(description + SET_ASIDE_NOTE).write_text(f"{stamp} {line}\n")
        lines.append(line)
    return lines


def remade_trigger(description) -> list[str]:
    """The input of a description's rule that makes it again once set aside in place: the note of that
    (newer than the description, and of other content each time, until its rule ran); none before."""
    note = Path(str(description) + SET_ASIDE_NOTE)
    return [str(note)] if note.exists() else []


def damaged_line(text: str) -> str | None:
    """The message of the DamagedInput a point's process died of, from its log's last lines (the last
    line of its traceback); None if it died of something else."""
    prefix = f"{DamagedInput.__module__}.{DamagedInput.__qualname__}: "  # after an MPI launcher's tag, if any
    found = [line.split(prefix, 1)[1].strip() for line in text.splitlines() if prefix in line]
    return found[-1] if found else None
