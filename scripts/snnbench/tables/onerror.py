"""Tables after a run whose jobs did not all finish (Snakemake's `onerror`).

A job that SLURM ends (a lost node, scancel, its time limit) is a failed Snakemake job: the point's
wrapper still writes a failed record saying why, but Snakemake runs nothing downstream of a failed
job, so the experiment's tables would wait for the point to be redone. Here each experiment whose
points all have a record, finished or failed, gets its tables from what is on disk, made by the
same collect code. They show the failed points as failed; the next run redoes those points and
remakes the tables (their records are newer and marked incomplete).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterator
from pathlib import Path

from snnbench import families
from snnbench.jsonfile import read_json
from snnbench.paths import RESULTS, point_benchmark
from snnbench.records import record
from snnbench.tables.collect import collect_tables
from snnbench.tables.frames import write_table

# Where snakemake-executor-plugin-slurm writes a job's log (unless --slurm-logdir says otherwise):
# rule_<rule>/<wildcards joined by _, / replaced by _>/<job id>.log; it keeps the logs of failed jobs.
SLURM_LOGS = ".snakemake/slurm_logs"
LOG_LINES = 20


def record_dead_jobs(points: dict[str, dict], slurm_logs: str = SLURM_LOGS) -> Iterator[str]:
    """A point without a record whose job left a SLURM log ended before its wrapper ran (a job
    script that failed, an environment whose Python is gone, a module that did not load): write it
    a failed record quoting the end of that log, so that the tables show it failed. The job failed,
    so Snakemake keeps its output marked incomplete (profiles/slurm: keep-incomplete) and the next
    run redoes the point. Yields one line per record written."""
    for path, spec in points.items():
        target = f"{path}/record.json"
        if os.path.exists(target):
            continue
        logs = glob.glob(f"{glob.escape(slurm_logs)}/rule_*/{glob.escape(slurm_log_folder(path))}/*.log")
        if not logs:
            continue
        log = max(logs, key=os.path.getmtime)
        with open(log, errors="replace") as f:
            tail = "".join(f.readlines()[-LOG_LINES:]).rstrip()
        rec = record.new(spec)
        rec["failure"] = {
            "reason": f"the job ended before the point's wrapper wrote its record; the end of its SLURM log "
            f"{log}:\n{tail}"
        }
        rec["wall_time_s"] = None  # not measured: the wrapper never ran
        os.makedirs(path, exist_ok=True)
        record.write(rec, Path(target))
        yield f"{target}: its job ended before the point ran; failed record written from its SLURM log {log}"


# How Snakemake logs a job that snakemake-executor-plugin-slurm could not submit (sbatch refused it):
# "Error in rule <rule>:", "    message: SLURM sbatch failed. The error message was '<why>'.", ...,
# "    output: <file>, <file>", within one error block.
REFUSED_SUBMISSION = re.compile(
    r"^Error in rule \S+:\n    message: SLURM sbatch failed\. The error message was '(?P<why>.*?)'\.\n"
    r"(?:(?!Error in rule )[\s\S])*?^    output: (?P<outputs>.*)$",
    re.MULTILINE,
)


def record_refused_jobs(points: dict[str, dict], snakemake_logs: list[str]) -> Iterator[str]:
    """A point without a record whose job SLURM refused at submission (a shape no node of the partition
    has, where the plan could not read the partition's nodes: snnbench.planning.slurm_request), as this
    run's Snakemake log tells: write it a failed record naming SLURM's refusal, so that the tables show
    it failed and why. Yields one line per record written."""
    refused = {}
    for log in snakemake_logs:
        with open(log, errors="replace") as f:
            for found in REFUSED_SUBMISSION.finditer(f.read()):
                for output in found["outputs"].split(", "):
                    refused[output.strip()] = (found["why"], log)
    for path, spec in points.items():
        target = f"{path}/record.json"
        if target not in refused or os.path.exists(target):
            continue
        why, log = refused[target]
        rec = record.new(spec)
        rec["failure"] = {"reason": f"SLURM refused the point's job at submission: {why} (its sbatch call: {log})"}
        rec["wall_time_s"] = None  # not measured: the job never ran
        os.makedirs(path, exist_ok=True)
        record.write(rec, Path(target))
        yield f"{target}: SLURM refused its job ({why}); failed record written"


def slurm_log_folder(path: str) -> str:
    """The plugin's folder for an execute job of the point at `path` (wildcards experiment, point)."""
    return path.removeprefix(f"{RESULTS}/").replace("/", "_")


def write_tables(
    experiment_points: dict[str, list[str]],
    activity_check: dict,
    tolerance: dict,
    contexts: dict[str, list[str]] | None = None,
    planned: dict[str, dict] | None = None,
) -> Iterator[str]:
    """Write results/<experiment>/{points,ranks,validation}.csv where they are missing or older
    than a record; yield one line per experiment written or left alone for want of records.
    contexts: per experiment, the files of other experiments' points its judging reads (a shared
    reference ensemble's, as collect reads them), those on disk read. planned: the campaign's points, as
    collect reads them (a record of another plan is not read)."""
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
            context = [path for path in (contexts or {}).get(experiment, []) if os.path.exists(path)]
            yield _write(experiment, points, records, tables, activity_check, tolerance, context, planned)
        except Exception as error:  # noqa: BLE001 (the run's own error is what matters; say why and go on)
            yield f"tables of {experiment} not written: {type(error).__name__}: {error}"


def _write(experiment, points, records, tables, activity_check, tolerance, context, planned) -> str:
    # One experiment, one family: its first record names it; collect reads every record once.
    names = families.of_spec(read_json(records[0])["point"]).collected
    missing = {path for path in points for name in names if not os.path.exists(f"{path}/{name}")}
    collected = [f"{path}/{name}" for path in points for name in names if path not in missing]
    collected += [f for path in missing for name in names if os.path.exists(f := f"{path}/{name}")]
    benchmarks = [point_benchmark(p) for p in points]
    frames = collect_tables(records, activity_check, benchmarks, collected, tolerance, context, planned)
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
