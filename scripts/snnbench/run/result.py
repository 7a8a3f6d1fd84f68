"""The child's side of a point that is one process (snn-training, snn-data: snnbench.run.child is the
parent's): `python -m <family>.run SPEC OUTDIR` runs the point and writes OUTDIR/result.json."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from snnbench.records import identity


def main(argv: list[str], run: Callable[[dict, Path], dict], versions: Callable[[dict], dict]) -> None:
    """Run the point of SPEC (argv[0]) in OUTDIR (argv[1]) and write its result with what this process
    ran (the code it imported, the files it read, `versions(result)`: the record's benchmark_hash),
    then end the process without an orderly shutdown (persistent loader workers need none)."""
    spec_path, outdir = Path(argv[0]), Path(argv[1])
    spec = json.loads(spec_path.read_text())
    outdir.mkdir(parents=True, exist_ok=True)
    result = run(spec, outdir)
    result["identity"] = identity.report(versions(result))
    (outdir / "result.json").write_text(json.dumps(result, indent=1))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
