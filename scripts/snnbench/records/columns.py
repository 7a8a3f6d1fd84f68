"""The columns every record gives its table, whatever its family: status and provenance, the record's
machine, and Snakemake's own benchmark of the point's job. Each family's rows (snnbench.<family>.rows)
add their own; snnbench.tables.collect turns records into tables.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from snnbench.machine import hardware
from snnbench.records import slurm_grant


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
        "git_commit_utc": prov["workflow"].get("git_commit_utc"),
        "benchmark_hash": prov["benchmark_hash"],
        "started_utc": prov["started_utc"],
        "slurm_job_id": (slurm := prov.get("slurm") or {}).get("job_id"),
        # Empty, or where the job did not get what it asked for, e.g. "shared node; 2 threads per core".
        "slurm_grant_problems": slurm_grant.grant_problems(slurm.get("asked"), slurm.get("granted")),
    }


def machine_name(prov: dict) -> str:
    """The record's machine (site:partition or host); for records written before machines were
    named (2026-11-25), its host and SLURM partition as snnbench.machine.hardware.machine names them."""
    if "machine" in prov:
        return prov["machine"]["name"]
    return hardware.machine(prov["host"]["hostname"], (prov.get("slurm") or {}).get("partition"), environ={})["name"]
