"""A results history outside the checkout: every finished point of every run, kept per machine and run.

    python -m snnbench.results.history add [results/ | archive.tar.gz ...] [--history DIR]
    python -m snnbench.results.history show [--history DIR]
    make history-add [FROM=results]

Where it lives: snnbench.results.history_place (--history, the config's history.folder, $SNNBENCH_HISTORY, a
per-user folder). Plain files, one Parquet table per machine and run plus each point's record, gzip-compressed and
named by its content digest:

    <history>/<machine>/<commit>-<digest of the run's records>.parquet
    <history>/<machine>/records/<record digest>.json.gz
    <history>/<machine>/hardware/<node digest>.json.gz    the hardware record of each node seen (once per hardware)

A point is its record: a record already in the history (same content digest) is never added again, so adding the
same run twice changes nothing, and files of several machines or people merge by copying (no two runs share a
name). Series are keyed by the benchmark's parameters, the machine's name and its hardware (a digest of each
node's CPUs, topology and total memory from its hardware record) (SERIES_KEYS): two hosts that share a name, or a
machine whose hardware changed, are two series. The simulator's version and build, snnbench's commit, the point's
identity digest (the record's benchmark_hash), the seed and the date are columns along a series (ALONG), so a new
version or commit continues its series instead of starting one. A series' id is computed when the history is read
(series_ids), so tables added before a key was added join their series.

Adds into one history take turns (history_files.locked), so that two at once add no point twice. A table
that does not read (cut short by a full disk or a killed copy) is named in one line: `add` sets it aside
(<name>.damaged, its points back by adding their run again), `show` and the dashboard leave it out. Exit codes of
`add`: 0 points added or nothing new; 2 a source with no finished points (the others are added), a history
folder that is a file or cannot be made, or a refused config.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd

from snnbench import jsonfile, paths
from snnbench.network.phases import PHASES
from snnbench.results import archive
from snnbench.results.history_files import Damaged, Unusable, locked, tables, write_once
from snnbench.results.history_place import default_root, place_arguments, place_or_refusal
from snnbench.tables.frames import read_points

# The memory lstopo prints on its Machine and NUMA node lines (it varies from run to run on a VM); caches stay.
NODE_MEMORY = re.compile(r"(Machine|NUMANode L#\d+) \((?:P#\d+ )?[\d.]+[KMGT]?B(?: total)?\)")
# What a series is: the benchmark's parameters (model, size, input, durations, simulator, shape) and the machine:
# its name and its hardware digest ('' where the record has no hardware record), since a name alone can stand for
# two hosts (a reinstalled node, two clusters' `login1`) whose times are not one series.
SERIES_KEYS = [
    "machine",
    "hardware",
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
    "git_commit_utc",
    "benchmark_hash",
    "seed",
    "started_utc",
    "experiment",
    "status",
    "valid",
    "disturbed",
    "host",
    "cpu_model",
    "path",
]
METRICS = [
    *(f"time_{phase}_s" for phase in (*PHASES, "total")),
    *(f"cpu_{phase}_s" for phase in PHASES),  # CPU time beside wall time: what a neighbour's load hardly moves
    "others_cpu_fraction",
    "real_time_factor",
    "peak_rss_mb_sum",
    "peak_rss_mb_max_rank",
    "job_wall_s",
    "job_max_rss_mb",
]
# Added by the history: the series' id, the point's record (digest and file), its run and when and whence it came.
OWN = ["series", "record_sha", "record_file", "run", "added_utc", "source"]
COLUMNS = [*OWN, *SERIES_KEYS, *ALONG, *METRICS]


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
    frame["disturbed"] = frame["disturbed"].str.lower().map({"true": True, "false": False})  # missing: not judged
    frame["series"] = series_ids(frame)
    return frame


def series_ids(frame: pd.DataFrame) -> pd.Series:
    """Each point's series: a digest of its SERIES_KEYS as text (the one place a series' id is made)."""
    keys = frame[SERIES_KEYS].astype("string").fillna("")
    joined = ["|".join(row) for row in keys.itertuples(index=False)]  # (agg on no rows: a frame)
    return pd.Series([digest(k) for k in joined], index=frame.index, dtype="string")


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
    return sorted(p for p in results.glob("*/points.csv") if p.parent.name != Path(paths.IMPORTED_DIR).name)


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
    found = experiment_tables(folder)
    if not found:
        return normalised(pd.DataFrame()).assign(record_sha=pd.Series(dtype="string")), {}
    rows, records = [], {}
    for table in found:
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
        frame = frame.assign(record_sha=pd.array(shas, dtype="string"), hardware=[key for key, _ in machines])
        rows.append(frame.assign(hardware=frame["hardware"].astype("string"), series=series_ids(frame)))
    frame = pd.concat(rows, ignore_index=True).drop_duplicates("record_sha")
    return frame.assign(source=source), records


class NothingFound(ValueError):
    """A source with no finished point to add; the message names it and what is looked for."""


def read_checked(root: Path | None = None, columns: list[str] | None = None) -> tuple[pd.DataFrame, list[Damaged]]:
    """The whole history (every machine's runs) as one table, COLUMNS (or those named) in order, the tables
    that do not read left out; and those."""
    frames, damaged = tables(Path(root or default_root()), columns=columns)
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in columns or COLUMNS}), damaged
    frame = pd.concat(frames, ignore_index=True)
    if columns is None:
        frame = frame.sort_values(["started_utc", "seed"], kind="stable", ignore_index=True)
        frame["series"] = series_ids(frame)  # as SERIES_KEYS say now, whatever they said when a table was added
    return frame, damaged


def read(root: Path | None = None, columns: list[str] | None = None) -> pd.DataFrame:
    """read_checked's table, each table that does not read named on stderr in one line."""
    frame, damaged = read_checked(root, columns)
    for table in damaged:
        print(table.line("left out"), file=sys.stderr)
    return frame


def nothing_at(root: Path) -> str:
    return f"no history at {root} (make history-add first)"


def known_records(root: Path, machine: str) -> set[str]:
    """The records of a machine's runs in the history; a table that does not read set aside (its points are then
    added again with their run), named on stderr."""
    frames, damaged = tables(root, machine, ["record_sha"])
    for table in damaged:
        kept = jsonfile.set_aside(table.path)
        print(table.line(f"set aside as {kept.name}: add its run again to restore its points"), file=sys.stderr)
    return {sha for frame in frames for sha in frame["record_sha"]}


def add_points(root: Path, points: pd.DataFrame, records: dict[str, bytes]) -> list[Path]:
    """Add the points no record of which is in the history yet: one Parquet file per machine and run, and
    each record gzip-compressed; returns the tables written (none when every point was there)."""
    root = Path(root)
    written = []
    added = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    with locked(root):
        for machine, rows in points.groupby("machine", sort=True):
            name = (machine or "unknown-machine").replace("/", "_")
            new = rows[~rows["record_sha"].isin(known_records(root, name))]
            if not new.empty:
                written.append(_add_run(root / name, new, records, added))
    return written


def _add_run(folder: Path, new: pd.DataFrame, records: dict[str, bytes], added: str) -> Path:
    """One machine's new points: their records, the hardware records not there yet, and their run's table."""
    commits = sorted(set(new["git_commit"]) - {""})
    label = commits[0][:10] if len(commits) == 1 else ("commits" if commits else "nocommit")
    run = f"{label}-{digest(''.join(sorted(new['record_sha'])))[:12]}"
    (folder / "records").mkdir(parents=True, exist_ok=True)
    for sha in new["record_sha"]:
        write_once(folder / "records" / f"{sha}.json.gz", gzip.compress(records[sha], mtime=0))
    for node in (name for name in records if name.startswith("hardware/")):  # each node's record once
        if not (folder / f"{node}.json.gz").exists():
            (folder / "hardware").mkdir(exist_ok=True)
            write_once(folder / f"{node}.json.gz", gzip.compress(records[node], mtime=0))
    files = [f"{folder.name}/records/{sha}.json.gz" for sha in new["record_sha"]]
    table = new.assign(run=run, added_utc=added, record_file=files)
    write_once(folder / f"{run}.parquet", table[COLUMNS].reset_index(drop=True))
    return folder / f"{run}.parquet"


def add(source: Path, root: Path | None = None) -> list[Path]:
    """Add a results folder (a checkout's results/, an older copy), one experiment's points.csv in one, or an
    archive (`make archive`). Raises NothingFound where it holds no finished point (nothing is made then)."""
    root = Path(root or default_root())
    source = Path(source)
    if source.is_file() and source.suffix != ".csv":
        with tempfile.TemporaryDirectory() as unpacked:
            archive.unpack(source, Path(unpacked))
            points, records = points_of(Path(unpacked), f"archive {source.name}")
            return add_points(root, _found(source, points), records)
    points, records = points_of(source, f"results {source.resolve()}")
    return add_points(root, _found(source, points), records)


def _found(source: Path, points: pd.DataFrame) -> pd.DataFrame:
    if points.empty:
        why = "no finished points found" if source.exists() else "no such folder or file"
        raise NothingFound(
            f"{source}: {why} (looked for <experiment>/points.csv in a results folder or under a checkout's "
            "results/, an experiment's points.csv, or an archive of make archive; each point with its record.json); "
            "nothing added"
        )
    return points


def record(root: Path, record_file: str) -> bytes:
    """A point's record as it was added (decompressed)."""
    return gzip.decompress((Path(root) / record_file).read_bytes())


def by_version(frame: pd.DataFrame) -> pd.DataFrame:
    """Per series and simulator version (and build) of valid points: seeds, commits, and the median and standard
    deviation over seeds of the RTF and the simulate time."""
    valid = frame[frame["valid"].astype(bool)]
    keys = ["machine", "hardware", "model_name", "simulator", "neuron_scale", "threads_per_rank"]
    keys += ["simulator_version", "build"]
    grouped = valid.groupby(keys, sort=True)
    table = grouped.agg(seeds=("seed", "size"), commits=("git_commit", "nunique"))
    for metric, name in (("real_time_factor", "rtf"), ("time_simulate_s", "simulate_s")):
        table[f"{name}_median"] = grouped[metric].median()
        table[f"{name}_sd"] = grouped[metric].std()
    return table.reset_index()


def summary(root: Path, frame: pd.DataFrame) -> str:
    files = list(Path(root).glob("*/*.parquet"))
    records = list(Path(root).glob("*/records/*.json.gz"))
    nodes = list(Path(root).glob("*/hardware/*.json.gz"))
    return (
        f"{root}: {len(frame)} points in {frame['series'].nunique()} series of "
        f"{len(frame.drop_duplicates(['machine', 'hardware']))} machine(s) (name and hardware), "
        f"{len(files)} run tables, {len(records)} records, "
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
    place = place_or_refusal(args)
    if place is None:
        return 2
    code = 0
    if args.action == "add":
        for source in args.sources or [Path("results")]:
            try:
                written = add(source, place.root)
            except (NothingFound, archive.ArchiveError) as nothing:  # the other sources are still added
                print(nothing, file=sys.stderr)
                code = 2
                continue
            except Unusable as error:
                print(f"{place}: cannot be made or written ({error.strerror})", file=sys.stderr)
                return 2
            print(f"{source}: " + (", ".join(str(w) for w in written) if written else "nothing new"))
    frame = read(place.root)
    if args.action == "show":
        print(by_version(frame).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print(summary(place.root, frame))
    return code


if __name__ == "__main__":
    sys.exit(main())
