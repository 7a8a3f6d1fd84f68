"""`python -m snnbench.results.import_runs RUNS [--configfile FILE ...] [--gpu TEXT] [--force]`: records for points
whose child processes ran on another machine without the workflow.

Where Snakemake cannot run (a lent GPU machine without a package index, say), a configured point's
child runs alone: `python -m snnbench.network.run <spec> <dir>` (PD14, hpc_benchmark) or
`python -m snnbench.training.run <spec> <dir>`, with <dir> = RUNS/<the point's path in the checkout>;
the runner may write the child's exit status into <dir>/exit_status. Back here, run from the checkout
(as Snakemake is), this writes each point's record with its family's own code (the record the
execute rule writes: ok, or failed with the exit status and the end of <dir>/log.txt), so that the
workflow's collect, figures and gpu_summary take it like any other. Provenance says what is not known
of that run (snnbench.records.provenance.ran_elsewhere); --gpu records the GPU as the person importing states
it. Its Snakemake benchmark file is written with NA (no job ran here), so that the workflow counts
the point as done. A point that already has a record is left alone unless --force.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from snnbench import families, planning
from snnbench.paths import point_benchmark, point_log
from snnbench.records import record

RUN_FILES = ("rank0.json", "result.json", "log.txt")
# Snakemake's benchmark columns (snakemake.benchmark), none measured.
BENCHMARK_COLUMNS = (
    "s",
    "h:m:s",
    "max_rss",
    "max_vms",
    "max_uss",
    "max_pss",
    "io_in",
    "io_out",
    "mean_load",
    "cpu_time",
)


def run_dirs(runs: Path) -> list[Path]:
    """The folders under RUNS that a point's child left (any of RUN_FILES)."""
    return sorted({f.parent for name in RUN_FILES for f in runs.rglob(name)})


def import_one(run_dir: Path, runs: Path, config: dict, force: bool, gpu: str | None) -> str:
    """Import one run folder into the checkout in the working directory; the line that says what happened."""
    checkout = Path.cwd()
    point = run_dir.relative_to(runs)
    spec_path = checkout / point / "spec.json"
    if not spec_path.exists():
        return (
            f"{point}: no {spec_path.relative_to(checkout)}: configure the point first "
            "(snakemake --until configure_point)"
        )
    spec = json.loads(spec_path.read_text())
    family = families.of_spec(spec)
    outputs = {name: checkout / point / name for name in family.outputs}
    if outputs["record.json"].exists() and not force:
        return f"{point}: has a record already, left alone (--force replaces it)"
    rec = family.import_run(spec, run_dir, outputs, checkout / point_log(str(point)), config)
    benchmark = checkout / point_benchmark(str(point))
    benchmark.parent.mkdir(parents=True, exist_ok=True)
    benchmark.write_text("\t".join(BENCHMARK_COLUMNS) + "\n" + "\t".join(["NA"] * len(BENCHMARK_COLUMNS)) + "\n")
    if gpu:
        rec["provenance"]["imported"]["gpu_as_stated"] = gpu
        record.write(rec, outputs["record.json"])
    reason = f": {rec['failure']['reason']}" if rec["failure"] else ""
    return f"{point}: {rec['status']}{reason}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, help="the folder that holds the runs, laid out as the checkout")
    parser.add_argument("--configfile", nargs="*", default=[], help="config files as given to the workflow")
    parser.add_argument("--gpu", help="the GPU the runs used, as you know it (recorded as stated)")
    parser.add_argument("--force", action="store_true", help="replace records that exist")
    args = parser.parse_args(argv)
    config = planning.plan_files(args.configfile).config
    found = run_dirs(args.runs.resolve())
    if not found:
        print(f"{args.runs}: no runs (folders with {', '.join(RUN_FILES)})", file=sys.stderr)
        return 1
    for run_dir in found:
        print(import_one(run_dir, args.runs.resolve(), config, args.force, args.gpu))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
