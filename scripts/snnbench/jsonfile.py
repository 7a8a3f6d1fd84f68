"""JSON files of the data path (specs, records, validation results), read with errors that name the file; every
file of a point written atomically (its spikes and statistics too)."""

from __future__ import annotations

import json
from pathlib import Path

DAMAGED = ".damaged"  # the suffix a damaged file is set aside with (never deleted)


class DamagedFile(ValueError):
    """A file of a point that cannot be read; the message names it and says what to do."""


def read_json(path) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except json.JSONDecodeError as error:
        raise DamagedFile(
            f"{path} is damaged ({error.msg} at line {error.lineno}, column {error.colno}): delete it and run the "
            "workflow again to recompute its point"
        ) from None


def read_json_if_whole(path):
    """The file's JSON content; None where it is missing or does not read as JSON (a caller that
    only compares it with what it expects)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_json(obj, path) -> None:
    """Write atomically: a killed writer never leaves half a file."""
    write_atomically(path, lambda f: f.write((json.dumps(obj, indent=1) + "\n").encode()))


def write_npz(path, compressed: bool = True, **arrays) -> None:
    """numpy's .npz, written atomically."""
    import numpy as np  # (only where arrays are written)

    write_atomically(path, lambda f: (np.savez_compressed if compressed else np.savez)(f, **arrays))


def write_atomically(path, write) -> None:
    """`write(binary file)` to a temporary beside `path`, renamed over it once whole: neither a killed writer nor
    a reader while it writes (another head's checks before its jobs) ever finds half a file at `path`."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)


def set_aside_damaged(
    paths, dry_run: bool, wrong_shape=None, then: str = "its point runs again"
) -> list[tuple[str, str]]:
    """Files among `paths` that exist but are not complete JSON (a full disk, a killed copy), or
    whose content `wrong_shape(content)` says is not of their kind (a string: what is wrong):
    renamed to <name>.damaged so that the workflow writes them anew (nothing is deleted). In a dry
    run only named. Returns (path, message) per damaged file; the message ends with `then`."""
    lines = []
    for path in map(Path, paths):
        if not path.exists():
            continue
        try:
            with open(path) as f:
                content = json.load(f)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            problem = f"is damaged ({error})"
        except IsADirectoryError:  # a folder in its place: set aside like a damaged file
            problem = "is damaged (a folder, not a file)"
        else:
            wrong = wrong_shape(content) if wrong_shape else None
            if not wrong:
                continue
            problem = f"is not what it should be ({wrong})"
        kept = set_aside(path) if not dry_run else path.with_name(path.name + DAMAGED)
        action = "would be set aside" if dry_run else f"set aside as {kept.name}"
        lines.append((str(path), f"{path} {problem}; {action}, {then}"))
    return lines


def set_aside(path) -> Path:
    """Rename a damaged file to <name>.damaged (kept, not deleted: what it held may still be read by hand)."""
    path = Path(path)
    kept = path.with_name(path.name + DAMAGED)
    path.replace(kept)
    return kept
