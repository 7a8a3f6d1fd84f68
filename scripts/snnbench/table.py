"""The tables' common parts: the columns every record has (status, provenance), Snakemake's
benchmark of a point's job, and reading / writing tables. Records become rows in snnbench.collect.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from snnbench import hardware


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
        "machine": machine_name(prov),
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


def machine_name(prov: dict) -> str:
    """The record's machine (site:partition or host); for records written before machines were
    named (2026-11-25), its host and SLURM partition as snnbench.hardware.machine names them."""
    if "machine" in prov:
        return prov["machine"]["name"]
    return hardware.machine(prov["host"]["hostname"], (prov.get("slurm") or {}).get("partition"), environ={})["name"]


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


def shapes(rows: pd.DataFrame) -> pd.Series:
    """nodes x ranks per node x threads per rank of each row, e.g. 1x2x4."""
    parts = [rows[k].astype(str) for k in ("nodes", "ranks_per_node", "threads_per_rank")]
    return parts[0] + "x" + parts[1] + "x" + parts[2]
