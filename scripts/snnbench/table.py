"""Records -> tidy tables (pandas): one row per point, and one row per point and rank.

Family-neutral: each record's family makes its columns (snnbench.families); here are the
columns every record has (status, provenance), Snakemake's benchmark, and reading / writing
the tables.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from snnbench import families
from snnbench.jsonfile import read_json


def read_benchmark_row(path) -> dict:
    """The last row of a Snakemake benchmark file (s, max_rss, max_pss, ...), as text; {} without one.
    Read with the csv module: collect reads one per point, and pandas costs a millisecond each."""
    if path is None or not os.path.exists(path):
        return {}
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return rows[-1] if rows else {}


def read_benchmark(path: Path | None) -> dict:
    """Snakemake's own measurement of the execute job (the second, independent timing source)."""
    row = read_benchmark_row(path)
    if not row:
        return {}

    def number(text):
        try:
            return float(text)
        except (TypeError, ValueError):
            return np.nan

    return {"job_wall_s": number(row["s"]), "job_max_rss_mb": number(row.get("max_rss"))}


def outcome_columns(rec: dict) -> dict:
    """Status and provenance columns every record has, whatever its model family."""
    prov = rec["provenance"]
    return {
        "status": rec["status"],
        "failure_reason": (rec["failure"] or {}).get("reason", ""),
        "wall_time_s": rec["wall_time_s"],
        "host": prov["host"]["hostname"],
        "cpu_model": prov["host"]["cpu_model"],
        "load_average_1min": prov["host"]["load_average_1_5_15"][0],
        "git_commit": prov["workflow"]["git_commit"],
        "git_dirty": prov["workflow"]["git_dirty"],
        "benchmark_hash": prov["benchmark_hash"],
        "started_utc": prov["started_utc"],
        "slurm_job_id": (prov.get("slurm") or {}).get("job_id"),
    }


def _arrow_column(values: pd.Series) -> pa.Array:
    try:
        return pa.array(values, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types in one column (e.g. 2 and "2x"): as text
        return pa.array(values.map(lambda v: None if pd.isna(v) else str(v)), from_pandas=True)


def write_table(frame: pd.DataFrame, path) -> None:
    """A table as CSV (booleans as true/false, empty for missing), written by Arrow: about six
    times faster than pandas for the long tables of large experiments (24 validation rows per
    point). Read back with read_points."""
    columns = {str(name): _arrow_column(frame[name]) for name in frame.columns}
    pa_csv.write_csv(pa.table(columns), path)


def read_points(path) -> pd.DataFrame:
    """A points.csv as written by collect. Read whole (not in chunks): sparse columns such as
    rates_agree_with_nest (empty for most rows) would otherwise get a type per chunk."""
    return pd.read_csv(path, low_memory=False)


def point_row(rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
    """One record as the columns of points.csv, made by its family."""
    return families.of_spec(rec["point"]).row(rec, bounds, benchmark)


def collect_tables(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    collected_paths: list | None = None,
    tolerance: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """points, ranks and the long validation table of some records, with Snakemake's benchmarks
    and the files each point's family collects beside its record (PD14: validate_point's result).
    Each family turns its records into rows and judges what needs several points (validation
    verdict with the current tolerance, efficiency, agreement)."""
    benchmark_paths = benchmark_paths or [None] * len(record_paths)
    beside: dict[str, dict] = {}
    for path in map(str, collected_paths or []):  # os.path: pathlib costs ~0.1 ms a call, twice per point
        folder, name = os.path.split(path)
        beside.setdefault(folder, {})[name] = path
    rows, ranks, extras = {}, [], {}
    for path, bench in zip(record_paths, benchmark_paths, strict=True):
        rec = read_json(path)
        family = families.of_spec(rec["point"])
        rows.setdefault(family.name, []).append(family.row(rec, bounds, read_benchmark(bench)))
        ranks += family.rank_rows(rec)
        files = beside.get(os.path.dirname(str(path)), {})
        extras.setdefault(family.name, []).append((rec["point"]["path"], {n: read_json(f) for n, f in files.items()}))
    tables, longs = [], []
    for name, family_rows in rows.items():
        family = families.get(name)
        points, long = family.finish_table(pd.DataFrame(family_rows), extras[name], tolerance)
        tables.append(points.sort_values([k for k in family.sort_keys if k in points], ignore_index=True))
        longs.append(long)
    points = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    long = pd.concat([t for t in longs if not t.empty], ignore_index=True) if any(not t.empty for t in longs) else None
    return points, pd.DataFrame(ranks), long if long is not None else pd.DataFrame()


def collect(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    collected_paths: list | None = None,
    tolerance: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """points and ranks tables (see collect_tables)."""
    points, ranks, _ = collect_tables(record_paths, bounds, benchmark_paths, collected_paths, tolerance)
    return points, ranks
