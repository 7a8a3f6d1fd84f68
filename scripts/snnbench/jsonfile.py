"""JSON files of the data path (specs, records, validation results), read with errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path


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


def write_json(obj, path) -> None:
    """Write atomically: a killed writer never leaves half a file."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1) + "\n")
    tmp.replace(path)
