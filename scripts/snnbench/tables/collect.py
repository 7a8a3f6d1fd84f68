"""Records -> tidy tables across families: each record's family makes its row (snnbench.families)
and judges what needs several points; the columns every record has are snnbench.records.columns',
reading and writing the tables snnbench.tables.frames'.
"""

from __future__ import annotations

import os

import pandas as pd

from snnbench import families
from snnbench.jsonfile import read_json
from snnbench.records import identity, record
from snnbench.records.columns import read_benchmark


def point_row(rec: dict, bounds: dict, benchmark: dict | None = None) -> dict:
    """One record as the columns of points.csv, made by its family."""
    return families.of_spec(rec["point"]).row(rec, bounds, benchmark)


def collect_tables(
    record_paths: list,
    bounds: dict,
    benchmark_paths: list | None = None,
    collected_paths: list | None = None,
    tolerance: dict | None = None,
    context_paths: list | None = None,
    planned: dict[str, dict] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """points, ranks and the long validation table of some records, with Snakemake's benchmarks
    and the files each point's family collects beside its record (PD14: validate_point's result).
    Each family turns its records into rows and judges what needs several points (validation
    verdict with the current tolerance, efficiency, agreement). context_paths: records and collected
    files of other experiments' points the judging reads (a shared reference ensemble): their rows
    take part, marked `context_for` the records' experiment, and are left out of the tables. planned: the
    campaign's points (path -> spec); a record whose point is not the plan for its folder is not read, its
    point shown failed (of_the_plan)."""
    benchmark_paths = benchmark_paths or [None] * len(record_paths)
    context_paths = list(map(str, context_paths or []))
    context_records = [p for p in context_paths if os.path.basename(p) == "record.json"]
    beside: dict[str, dict] = {}
    collected = [*map(str, collected_paths or []), *(p for p in context_paths if p not in context_records)]
    for path in collected:  # os.path: pathlib costs ~0.1 ms a call, twice per point
        folder, name = os.path.split(path)
        beside.setdefault(folder, {})[name] = path
    rows, ranks, extras = {}, [], {}
    own = [(path, bench, False) for path, bench in zip(record_paths, benchmark_paths, strict=True)]
    judged_for = None
    for path, bench, is_context in [*own, *((p, None, True) for p in context_records if own)]:
        rec = of_the_plan(read_json(path), os.path.dirname(str(path)), planned)
        family = families.of_spec(rec["point"])
        row = family.row(rec, bounds, read_benchmark(bench))
        if is_context:
            row["context_for"] = judged_for
        else:
            ranks += family.rank_rows(rec)
            judged_for = rec["point"]["experiment"]
        rows.setdefault(family.name, []).append(row)
        files = beside.get(os.path.dirname(str(path)), {})
        extras.setdefault(family.name, []).append((rec["point"]["path"], {n: read_json(f) for n, f in files.items()}))
    tables, longs = [], []
    for name, family_rows in rows.items():
        family = families.get(name)
        points, long = family.finish_table(pd.DataFrame(family_rows), extras[name], tolerance)
        if "context_for" in points:
            context = set(points.loc[points["context_for"].notna(), "path"])
            points = points[points["context_for"].isna()].drop(columns=["context_for"])
            long = long[~long["path"].isin(context)] if "path" in long else long
        tables.append(points.sort_values([k for k in family.sort_keys if k in points], ignore_index=True))
        longs.append(long)
    points = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    long = pd.concat([t for t in longs if not t.empty], ignore_index=True) if any(not t.empty for t in longs) else None
    return points, pd.DataFrame(ranks), long if long is not None else pd.DataFrame()


def of_the_plan(rec: dict, point: str, planned: dict[str, dict] | None) -> dict:
    """The record of the point in folder `point`; where its point is not the plan for that folder (a spec
    edited by hand that a run ran), a failed record of the planned point saying so instead."""
    spec = (planned or {}).get(point)
    differ = record.point_differences(rec["point"], spec) if spec is not None else None
    if not differ:
        return rec
    reason = (
        f"{point}/record.json is of another point than the plan ({differ}): not read; run the point again "
        f"(snakemake --forcerun {point}/spec.json: its spec is made again from the plan)"
    )
    provenance = {**rec["provenance"], **identity.claim([], None)}  # nothing of the plan was run
    failed = {"status": "failed", "failure": {"reason": reason}, "wall_time_s": None}
    return {"schema_version": record.SCHEMA_VERSION, "point": spec, **failed, "provenance": provenance}


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
