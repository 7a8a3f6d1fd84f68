"""Where the results history lives (place): the folder the command line names (--history DIR, make's HISTORY=DIR),
else the config's `history: {folder: ...}` (config/config.yaml, then the --configfile files, the last that sets
it), else $SNNBENCH_HISTORY, else ${XDG_DATA_HOME:-~/.local/share}/snnbench/history (per user, beside the
environment cache); a shared folder or a git repository a group keeps is named by the config key or the variable.

A config whose `history` block is wrong is refused before anything is read or added, naming the file, the key and
what is allowed; a place that is a file, not a folder, is refused naming it and what named it (exit code 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NamedTuple

import yaml

from snnbench import paths
from snnbench.planning.campaign import ConfigRefused, unreadable
from snnbench.schemas import CONFIG_SCHEMA, config_problems, load_schema

HISTORY_VARIABLE = "SNNBENCH_HISTORY"


class Place(NamedTuple):
    root: Path
    named_by: str  # what named it, for the messages: --history, history.folder in <file>, $SNNBENCH_HISTORY, ...

    def __str__(self) -> str:
        return f"history folder {self.root} ({self.named_by})"


def default_place() -> Place:
    """$SNNBENCH_HISTORY, else the per-user data folder (where no config names one)."""
    if os.environ.get(HISTORY_VARIABLE):
        return Place(Path(os.environ[HISTORY_VARIABLE]).expanduser(), f"${HISTORY_VARIABLE}")
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return Place(data / "snnbench" / "history", "the per-user default")


def default_root() -> Path:
    return default_place().root


def place(named: str | Path | None, config_files=()) -> Place:
    """The history folder: the one a command line names, else (none or 'default') the config's
    `history.folder`, else default_place(). The config files (config/config.yaml where the working
    directory has one, then those named) are checked first: raises ConfigRefused."""
    configured, where = configured_folder(config_files)
    if named not in (None, "", "default"):
        return Place(Path(named).expanduser(), "--history")
    return Place(Path(configured).expanduser(), f"history.folder in {where}") if configured else default_place()


def root_of(named: str | Path | None, config_files=()) -> Path:
    return place(named, config_files).root


def place_or_refusal(args: argparse.Namespace) -> Place | None:
    """place() of the command line's --history and --configfile (place_arguments); None, the refusal printed to
    stderr in one line, where a config file is refused or the place is not a folder (the commands then exit 2)."""
    try:
        found = place(args.history, args.configfile)
    except ConfigRefused as refused:
        print(refused, file=sys.stderr)
        return None
    if found.root.exists() and not found.root.is_dir():
        print(f"{found} is a file, not a folder: name a folder (or one to be made)", file=sys.stderr)
        return None
    return found


def root_or_refusal(args: argparse.Namespace) -> Path | None:
    found = place_or_refusal(args)
    return found.root if found else None


def configured_folder(config_files=()) -> tuple[str, str]:
    """The `history.folder` of the config files and the file that sets it ('' where none does; a later
    file overrides), each file's `history` block checked against the config schema. Raises ConfigRefused
    naming the file."""
    files = [paths.CONFIG] if Path(paths.CONFIG).is_file() else []
    folder, where = "", ""
    for path in [*files, *map(str, config_files)]:
        if not Path(path).is_file():
            raise ConfigRefused([path], [f"{path}: no such config file"])
        problems = unreadable(path)
        block = {} if problems else (yaml.safe_load(Path(path).read_text()) or {}).get("history", {})
        problems = problems or config_problems({"history": block}, _history_schema())
        if problems:
            raise ConfigRefused([path], problems)
        if block.get("folder"):
            folder, where = block["folder"], path
    return folder, where


def _history_schema() -> dict:
    schema = load_schema(CONFIG_SCHEMA)
    return {"type": "object", "properties": {"history": schema["properties"]["history"]}}


def place_arguments(parser: argparse.ArgumentParser) -> None:
    """The command line's --history and --configfile (what make passes as HISTORY= and CONFIG=)."""
    parser.add_argument(
        "--history",
        help=f"the history folder (default: the config's history.folder, else ${HISTORY_VARIABLE}, else per user)",
    )
    parser.add_argument(
        "--configfile", nargs="+", default=[], help="config files on top of config/config.yaml (history.folder)"
    )
