"""Share results: pack an experiment's tables, records and provenance into one .tar.gz, and read
such archives back (from other machines or clusters) beside local results without rerunning.

An archive keeps the repository's layout (results/<experiment>/..., benchmarks/execute/...) and
holds MANIFEST.json: the experiment's config and the bounds it was judged with, the workflow
commit, where and when it was packed, and the SHA-256 of every file (checked on reading).
Records are self-describing, so reading an archive is collecting its records again with the
current bounds: tables from several archives concatenate like tables of one machine.
"""

from __future__ import annotations

import datetime
import io
import json
import socket
import tarfile
from pathlib import Path

import pandas as pd

from snnbench import hashing, paths
from snnbench.records import provenance
from snnbench.tables import collect

FORMAT = 1
MANIFEST = "MANIFEST.json"


class ArchiveError(ValueError):
    """An archive that cannot be read (bad manifest, missing or altered file)."""


def hardware_files(files: list) -> list[str]:
    """The hardware records (one per node) that the packed records name: they lie beside each
    record, written by its point, not outputs of a rule."""
    found = []
    for f in files:
        if Path(f).name == "record.json":
            try:
                names = json.loads(Path(f).read_text()).get("hardware", [])
            except (OSError, ValueError):
                continue  # a damaged record is packed as it is
            found += [str(Path(f).parent / name) for name in names if (Path(f).parent / name).exists()]
    return found


def pack(out: Path, experiment: str, files: list, config: dict) -> dict:
    """Write `out` (.tar.gz) with `files` (paths relative to the working directory, stored as
    they are) and a manifest; returns the manifest."""
    files = sorted({str(f) for f in files})
    manifest = {
        "format": FORMAT,
        "experiment": experiment,
        "packed_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "packed_on": socket.gethostname(),
        "workflow": provenance.workflow_version(),
        "config": config,
        "files": {f: hashing.file_sha256(Path(f)) for f in files},
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        body = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size = len(body)
        info.mtime = int(datetime.datetime.now().timestamp())
        tar.addfile(info, io.BytesIO(body))
        for f in files:
            tar.add(f, arcname=f, recursive=False)
    return manifest


def unpack(archive: Path, dest: Path) -> dict:
    """Extract `archive` into `dest` (safely: no absolute paths, links out or devices) and check
    every file against the manifest; returns the manifest."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError, EOFError) as error:  # cut short, not a .tar.gz, gone, a folder
        raise ArchiveError(f"{archive}: not a readable archive ({type(error).__name__}: {error})") from None
    try:
        manifest = json.loads((dest / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ArchiveError(f"{archive}: no readable {MANIFEST}: {error}") from None
    if manifest.get("format") != FORMAT:
        raise ArchiveError(f"{archive}: archive format {manifest.get('format')!r}, expected {FORMAT}")
    for name, digest in manifest["files"].items():
        path = dest / name
        if not path.is_file():
            raise ArchiveError(f"{archive}: {name} is listed in the manifest but missing")
        if hashing.file_sha256(path) != digest:
            raise ArchiveError(f"{archive}: {name} does not match its checksum")
    return manifest


def read(archive: Path, dest: Path, bounds: dict, tolerance: dict | None, label: str) -> pd.DataFrame:
    """Unpack `archive` into `dest` and collect its records into a points table with the
    current bounds and tolerance; the column `source` names the archive."""
    manifest = unpack(archive, dest)
    dest = Path(dest)
    records = sorted(f for f in manifest["files"] if f.endswith("/record.json"))
    benchmarks, validations = [], []
    for rec in records:
        point = rec.removesuffix("/record.json")
        bench = paths.point_benchmark(point)
        val = f"{point}/validation.json"
        benchmarks.append(dest / bench if bench in manifest["files"] else None)
        validations.append(dest / val if val in manifest["files"] else None)
    points, _ = collect.collect([dest / r for r in records], bounds, benchmarks, validations, tolerance)
    points.insert(0, "source", label)
    return points
