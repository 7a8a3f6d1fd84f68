"""Tables after a run whose jobs did not all finish (Snakemake's `onerror`).

A job that SLURM ends (a lost node, scancel, its time limit) is a failed Snakemake job: the point's
wrapper still writes a failed record saying why, but Snakemake runs nothing downstream of a failed
job, so the experiment's tables would wait for the point to be redone. Here each experiment whose
points all have a record, finished or failed, gets its tables from what is on disk, made by the
same collect code. They show the failed points as failed; the next run redoes those points and
remakes the tables (their records are newer and marked incomplete).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from snnbench import families
from snnbench.collect import collect_tables
from snnbench.jsonfile import read_json
from snnbench.paths import point_benchmark
from snnbench.table import write_table


def write_tables(experiment_points: dict[str, list[str]], activity_check: dict, tolerance: dict) -> Iterator[str]:
    """Write results/<experiment>/{points,ranks,validation}.csv where they are missing or older
    than a record; yield one line per experiment written or left alone for want of records."""
    for experiment, points in experiment_points.items():
        records = [f"{path}/record.json" for path in points]
        missing = [path for path in records if not os.path.exists(path)]
        if missing:
            yield f"tables of {experiment} not written: {len(missing)} point(s) have no record, e.g. {missing[0]}"
            continue
        tables = {name: f"results/{experiment}/{name}.csv" for name in ("points", "ranks", "validation")}
        newest = max(os.path.getmtime(path) for path in records)
        if os.path.exists(tables["points"]) and os.path.getmtime(tables["points"]) >= newest:
            continue  # made by collect after the last record: up to date
        try:
            yield _write(experiment, points, records, tables, activity_check, tolerance)
        except Exception as error:  # noqa: BLE001 (the run's own error is what matters; say why and go on)
            yield f"tables of {experiment} not written: {type(error).__name__}: {error}"


def _write(experiment, points, records, tables, activity_check, tolerance) -> str:
    # One experiment, one family: its first record names it; collect reads every record once.
    names = families.of_spec(read_json(records[0])["point"]).collected
    missing = {path for path in points for name in names if not os.path.exists(f"{path}/{name}")}
    collected = [f"{path}/{name}" for path in points for name in names if path not in missing]
    collected += [f for path in missing for name in names if os.path.exists(f := f"{path}/{name}")]
    frames = collect_tables(records, activity_check, [point_benchmark(p) for p in points], collected, tolerance)
    for frame, path in zip(frames, tables.values(), strict=True):
        write_table(frame, path)
    status = frames[0].set_index("path")["status"]
    failed = int((status != "ok").sum())
    waiting = sum(status.get(path) == "ok" for path in missing)
    unjudged = f"; {waiting} finished point(s) not yet validated" if waiting else ""
    return (
        f"tables of {experiment} written from the records on disk: {tables['points']} "
        f"({failed} failed point(s){unjudged}); the next run redoes the unfinished jobs and remakes them"
    )
