"""A results history outside the checkout: every finished point of every run, kept per machine and run.

    python -m snnbench.results.history add [results/ | archive.tar.gz ...] [--history DIR]
    python -m snnbench.results.history show [--history DIR]
    make history-add [FROM=results]

Where it lives (root_of): the folder the command line names (--history DIR, make's HISTORY=DIR), else the config's
`history: {folder: ...}` (config/config.yaml, then the --configfile files, the last that sets it), else
$SNNBENCH_HISTORY, else ${XDG_DATA_HOME:-~/.local/share}/snnbench/history (per user, beside the environment cache); a
shared folder or a git repository a group keeps is named by the config key or the variable. A config whose `history`
block is wrong is refused before anything is read or added, naming the file, the key and what is allowed. Plain
files, one Parquet table per machine and run plus each point's record, gzip-compressed and named by its content
digest:

    <history>/<machine>/<commit>-<digest of the run's records>.parquet
    <history>/<machine>/records/<record digest>.json.gz
    <history>/<machine>/hardware/<node digest>.json.gz    the hardware record of each node seen (once per hardware)

A point is its record: a record already in the history (same content digest) is never added again, so adding the
same run twice changes nothing, and files of several machines or people merge by copying (no two runs share a
name). Series are keyed by the benchmark's parameters and the machine (SERIES_KEYS); the simulator's version and
build, snnbench's commit, the point's identity digest (the record's benchmark_hash), the seed, the date and the
hardware (a digest of each node's CPUs, topology and total memory from its hardware record) are columns along a
series (ALONG), so a new version or commit continues its series instead of starting one.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

from snnbench import paths
from snnbench.network.phases import PHASES
from snnbench.planning.campaign import ConfigRefused, unreadable
from snnbench.results import archive
from snnbench.schemas import CONFIG_SCHEMA, config_problems, load_schema
from snnbench.tables.frames import read_points

HISTORY_VARIABLE = "SNNBENCH_HISTORY"
# The memory lstopo prints on its Machine and NUMA node lines (it varies from run to run on a VM); caches stay.
NODE_MEMORY = re.compile(r"(Machine|NUMANode L#\d+) \((?:P#\d+ )?[\d.]+[KMGT]?B(?: total)?\)")
# What a series is: the benchmark's parameters (model, size, input, durations, simulator, shape) and the machine.
SERIES_KEYS = [
    "machine",
    "model_name",
    "simulator",
    "neuron_scale",
    "indegree_scale",
    "network_description",
    "input",
    "t_presim_ms",
    "t_sim_ms",
    "nodes",
    "ranks_per_node",
    "threads_per_rank",
]
# What varies along a series.
ALONG = [
    "simulator_version",
    "build",
    "git_commit",
    "git_dirty",
    "benchmark_hash",
    "seed",
    "started_utc",
    "experiment",
    "status",
    "valid",
    "host",
    "cpu_model",
    "hardware",
    "path",
]
METRICS = [
    *(f"time_{phase}_s" for phase in (*PHASES, "total")),
    "real_time_factor",
    "peak_rss_mb_sum",
    "peak_rss_mb_max_rank",
    "job_wall_s",
    "job_max_rss_mb",
]
# Added by the history: the series' id, the point's record (digest and file), its run and when and whence it came.
OWN = ["series", "record_sha", "record_file", "run", "added_utc", "source"]
COLUMNS = [*OWN, *SERIES_KEYS, *ALONG, *METRICS]


def default_root() -> Path:
    """$SNNBENCH_HISTORY, else the per-user data folder (where no config names one)."""
    if os.environ.get(HISTORY_VARIABLE):
        return Path(os.environ[HISTORY_VARIABLE]).expanduser()
    data = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return data / "snnbench" / "history"


def root_of(named: str | Path | None, config_files=()) -> Path:
    """The history folder: the one a command line names, else (none or 'default') the config's
    `history.folder`, else default_root(). The config files (config/config.yaml where the working
    directory has one, then those named) are checked first: raises ConfigRefused."""
    configured = configured_folder(config_files)
    if named not in (None, "", "default"):
        return Path(named).expanduser()
    return Path(configured).expanduser() if configured else default_root()


def root_or_refusal(args: argparse.Namespace) -> Path | None:
    """root_of the command line's --history and --configfile (place_arguments); None, the refusal printed to
    stderr, where a config file is refused (the commands then exit with 2)."""
    try:
        return root_of(args.history, args.configfile)
    except ConfigRefused as refused:
        print(refused, file=sys.stderr)
        return None


def configured_folder(config_files=()) -> str:
    """The `history.folder` of the config files ('' where none sets it; a later file overrides), each
    file's `history` block checked against the config schema. Raises ConfigRefused naming the file."""
    files = [paths.CONFIG] if Path(paths.CONFIG).is_file() else []
    folder = ""
    for path in [*files, *map(str, config_files)]:
        if not Path(path).is_file():
            raise ConfigRefused([path], [f"{path}: no such config file"])
        problems = unreadable(path)
        block = {} if problems else (yaml.safe_load(Path(path).read_text()) or {}).get("history", {})
        problems = problems or config_problems({"history": block}, _history_schema())
        if problems:
            raise ConfigRefused([path], problems)
        folder = block.get("folder") or folder
    return folder


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


def normalised(points: pd.DataFrame) -> pd.DataFrame:
    """A points table with the history's columns and types: keys as text ('' where missing), so that the
    tables of every run and machine group and concatenate alike; metrics as floats."""
    frame = pd.DataFrame(index=points.index)
    for column in [*SERIES_KEYS, *ALONG]:
        values = points[column] if column in points else pd.Series(pd.NA, index=points.index)
        frame[column] = values.map(_text).astype("string")
    for column in METRICS:
        frame[column] = pd.to_numeric(points[column], errors="coerce") if column in points else float("nan")
    frame["valid"] = frame["valid"].str.lower().eq("true")
    frame["series"] = frame[SERIES_KEYS].agg("|".join, axis=1).map(digest).astype("string")
    return frame


def _text(value) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


def digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()[:16]


def experiment_tables(folder: Path) -> list[Path]:
    """The per-experiment points tables of a results folder (or of a checkout holding one), imported
    archives' tables left out (add the archives themselves); or the one table named."""
    folder = Path(folder)
    if folder.suffix == ".csv":
        return [folder]
    results = folder / "results" if (folder / "results").is_dir() else folder
    return sorted(p for p in results.glob("*/points.csv") if p.parent.name != "imported")


def checkout_of(table: Path, points: pd.DataFrame) -> Path:
    """The folder that holds a table's results/ (its points' paths start with results/): the table's grandparent
    for results/<experiment>/points.csv, its parent for results/points.csv."""
    table = Path(table)
    for folder in table.parents[:3]:
        if any((folder / str(path) / "record.json").is_file() for path in points["path"].head(5)):
            return folder
    return table.parents[min(2, len(table.parents) - 1)]


def hardware_of(record_file: Path, body: bytes) -> tuple[str, dict[str, bytes]]:
    """What identifies the hardware a point ran on: a digest of each node's CPUs, topology and total memory from
    the hardware records beside its record ('' where it has none), and those records' bytes by node digest."""
    try:
        names = json.loads(body).get("hardware") or []
    except ValueError:
        return "", {}
    nodes = {}
    for name in names:
        path = Path(record_file).parent / name
        if path.is_file():
            facts = json.loads(path.read_bytes())
            topology = NODE_MEMORY.sub(r"\1", str(facts.get("topology")))  # lstopo's NUMA memory is what is free
            stable = [facts.get("logical_cpus"), topology, (facts.get("memory") or {}).get("total_mb")]
            nodes[digest(json.dumps(stable))] = path.read_bytes()
    return (digest("+".join(sorted(nodes))) if nodes else ""), nodes


def points_of(folder: Path, source: str) -> tuple[pd.DataFrame, dict[str, bytes]]:
    """Every point of a results folder that has its record: the normalised rows and each record's bytes by digest."""
    tables = experiment_tables(folder)
    if not tables:
        return normalised(pd.DataFrame()).assign(record_sha=pd.Series(dtype="string")), {}
    rows, records = [], {}
    for table in tables:
        points = read_points(table)
        root = checkout_of(table, points)
        found = [root / str(p) / "record.json" for p in points["path"]]
        keep = [f.is_file() for f in found]
        frame = normalised(points[keep])
        shas, machines = [], []
        for path in (f for f, k in zip(found, keep, strict=True) if k):
            body = path.read_bytes()
            shas.append(digest(body))
            records[shas[-1]] = body
            machines.append(hardware_of(path, body))
            records.update({f"hardware/{node}": facts for node, facts in machines[-1][1].items()})
        hardware = pd.array([key for key, _ in machines], dtype="string")
        rows.append(frame.assign(record_sha=pd.array(shas, dtype="string"), hardware=hardware))
    frame = pd.concat(rows, ignore_index=True).drop_duplicates("record_sha")
    return frame.assign(source=source), records


def read(root: Path | None = None, columns: list[str] | None = None) -> pd.DataFrame:
    """The whole history (every machine's runs) as one table, COLUMNS (or those named) in order."""
    files = sorted(Path(root or default_root()).glob("*/*.parquet"))
    if not files:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns or COLUMNS})
    frame = pd.concat([pd.read_parquet(f, columns=columns) for f in files], ignore_index=True)
    return frame.sort_values(["started_utc", "seed"], kind="stable", ignore_index=True) if columns is None else frame


def known_records(root: Path, machine: str) -> set[str]:
    return {
        r for f in (root / machine).glob("*.parquet") for r in pd.read_parquet(f, columns=["record_sha"])["record_sha"]
    }


def add_points(root: Path, points: pd.DataFrame, records: dict[str, bytes]) -> list[Path]:
    """Add the points no record of which is in the history yet: one Parquet file per machine and run, and
    each record gzip-compressed; returns the tables written (none when every point was there)."""
    root = Path(root)
    written = []
    added = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    for machine, rows in points.groupby("machine", sort=True):
        name = (machine or "unknown-machine").replace("/", "_")
        new = rows[~rows["record_sha"].isin(known_records(root, name))]
        if new.empty:
            continue
        commits = sorted(set(new["git_commit"]) - {""})
        label = commits[0][:10] if len(commits) == 1 else ("commits" if commits else "nocommit")
        run = f"{label}-{digest(''.join(sorted(new['record_sha'])))[:12]}"
        folder = root / name
        (folder / "records").mkdir(parents=True, exist_ok=True)
        for sha in new["record_sha"]:
            _write_once(folder / "records" / f"{sha}.json.gz", gzip.compress(records[sha], mtime=0))
        for node in (name for name in records if name.startswith("hardware/")):  # each node's record once
            if not (folder / f"{node}.json.gz").exists():
                (folder / "hardware").mkdir(exist_ok=True)
                _write_once(folder / f"{node}.json.gz", gzip.compress(records[node], mtime=0))
        table = new.assign(
            run=run, added_utc=added, record_file=[f"{name}/records/{sha}.json.gz" for sha in new["record_sha"]]
        )
        _write_once(folder / f"{run}.parquet", table[COLUMNS].reset_index(drop=True))
        written.append(folder / f"{run}.parquet")
    return written


def _write_once(path: Path, body) -> None:
    """Write through a temporary name, then rename: a reader never sees half a file."""
    temporary = path.with_name(f".{path.name}.tmp")
    if isinstance(body, pd.DataFrame):
        body.to_parquet(temporary, index=False)
    else:
        temporary.write_bytes(body)
    temporary.replace(path)


def add(source: Path, root: Path | None = None) -> list[Path]:
    """Add a results folder (a checkout's results/, an older copy), one experiment's points.csv in one, or an
    archive (`make archive`)."""
    root = Path(root or default_root())
    source = Path(source)
    if source.is_file() and source.suffix != ".csv":
        with tempfile.TemporaryDirectory() as unpacked:
            archive.unpack(source, Path(unpacked))
            points, records = points_of(Path(unpacked), f"archive {source.name}")
            return add_points(root, points, records)
    points, records = points_of(source, f"results {source.resolve()}")
    return add_points(root, points, records)


def record(root: Path, record_file: str) -> bytes:
    """A point's record as it was added (decompressed)."""
    return gzip.decompress((Path(root) / record_file).read_bytes())


def by_version(frame: pd.DataFrame) -> pd.DataFrame:
    """Per series and simulator version (and build) of valid points: seeds, commits, and the median and standard
    deviation over seeds of the RTF and the simulate time."""
    valid = frame[frame["valid"].astype(bool)]
    keys = ["machine", "model_name", "simulator", "neuron_scale", "threads_per_rank", "simulator_version", "build"]
    grouped = valid.groupby(keys, sort=True)
    table = grouped.agg(seeds=("seed", "size"), commits=("git_commit", "nunique"))
    for metric, name in (("real_time_factor", "rtf"), ("time_simulate_s", "simulate_s")):
        table[f"{name}_median"] = grouped[metric].median()
        table[f"{name}_sd"] = grouped[metric].std()
    return table.reset_index()


def summary(root: Path) -> str:
    frame = read(root)
    files = list(Path(root).glob("*/*.parquet"))
    records = list(Path(root).glob("*/records/*.json.gz"))
    nodes = list(Path(root).glob("*/hardware/*.json.gz"))
    return (
        f"{root}: {len(frame)} points in {frame['series'].nunique()} series of "
        f"{frame['machine'].nunique()} machine(s), {len(files)} run tables, {len(records)} records, "
        f"{len(nodes)} hardware records"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m snnbench.results.history", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["add", "show"], help="add runs; show: the points per series and version")
    parser.add_argument(
        "sources", nargs="*", type=Path, help="results folders, experiments' points.csv or archives (default results)"
    )
    place_arguments(parser)
    args = parser.parse_args(argv)
    root = root_or_refusal(args)
    if root is None:
        return 2
    if args.action == "add":
        for source in args.sources or [Path("results")]:
            written = add(source, root)
            print(f"{source}: " + (", ".join(str(w) for w in written) if written else "nothing new"))
    else:
        print(by_version(read(root)).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(summary(root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
