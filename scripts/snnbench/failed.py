"""Print the record paths of failed points (for `make rerun-failed`): `python -m snnbench.failed [RESULTS]`."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def failed_records(results: Path) -> list[Path]:
    return sorted(
        p for p in results.glob("*/*/*/*/seed*/record.json") if json.loads(p.read_text())["status"] == "failed"
    )


if __name__ == "__main__":
    for path in failed_records(Path(sys.argv[1] if len(sys.argv) > 1 else "results")):
        print(path)
