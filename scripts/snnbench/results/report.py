"""The provenance of every point as one table for the report: what ran where, with what, from
which workflow version, and what became of it."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd

from snnbench import families
from snnbench.jsonfile import read_json
from snnbench.machine import hardware


def hardware_summary(rec: dict, point_dir: Path | None) -> str:
    """One line per node of the point's hardware record (files beside its record), or why none."""
    if not rec.get("hardware"):
        return "none recorded"
    lines = []
    for name in rec["hardware"]:
        path = Path(point_dir or ".") / name
        lines.append(hardware.summary(read_json(path)) if path.exists() else f"{name}: missing")
    return "\n".join(lines)


def provenance_row(rec: dict, point_dir: Path | None = None) -> dict:
    prov, spec = rec["provenance"], rec["point"]
    slurm = prov.get("slurm") or {}
    described = families.of_spec(spec).describe(rec)
    return {
        "point": spec["path"],
        "status": rec["status"],
        "simulator": described["simulator"],
        "shape (n x r x t)": described["shape"],
        "model": described["model"],
        "seed": spec["seed"],
        "started (UTC)": prov["started_utc"],
        "host": prov["host"]["hostname"],
        "cpu": f"{prov['host']['cpu_model']} ({prov['host']['usable_cpus']} usable)",
        "scheduler job": slurm.get("job_id") or "none (local)",
        "workflow commit": (prov["workflow"]["git_commit"] or "unknown")[:12]
        + (" (dirty)" if prov["workflow"]["git_dirty"] else ""),
        "benchmark hash": prov["benchmark_hash"] or "not known (no process of the point reported what it ran)",
        "spec hash": prov.get("spec_hash", ""),
        "python": prov["python"]["version"],
        "packages": ", ".join(f"{k} {v}" for k, v in sorted(prov["packages"].items())),
        "hardware (per node)": hardware_summary(rec, point_dir),
        "binding": described.get("binding", ""),
        "environment": ", ".join(f"{k}={v}" for k, v in prov["environment"].items()),
        "failure": (rec["failure"] or {}).get("reason", "").splitlines()[0] if rec["failure"] else "",
    }


def provenance_table(record_paths: list, points: pd.DataFrame | None = None) -> pd.DataFrame:
    table = pd.DataFrame([provenance_row(read_json(p), Path(p).parent) for p in record_paths])
    if points is not None and not table.empty:
        verdict = points.set_index("path")
        problems = verdict.reindex(table["point"])
        table.insert(2, "valid", problems["valid"].to_numpy())
        reasons = (
            problems.get("activity_problems", pd.Series(index=problems.index, dtype=object)).fillna("").astype(str)
            + "; "
            + problems.get("validation_problems", pd.Series(index=problems.index, dtype=object)).fillna("").astype(str)
        )
        table.insert(
            3, "why invalid", [r.strip("; ") if not v else "" for r, v in zip(reasons, table["valid"], strict=True)]
        )
    return table


def to_html(table: pd.DataFrame, title: str) -> str:
    body = table.to_html(index=False, border=0, classes="provenance", na_rep="")
    style = (
        "body{font-family:sans-serif;font-size:12px} table{border-collapse:collapse} "
        "td,th{padding:2px 6px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top} "
        "td{white-space:pre-line}"
    )
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body><h3>{html.escape(title)}</h3>{body}</body></html>\n"
    )
