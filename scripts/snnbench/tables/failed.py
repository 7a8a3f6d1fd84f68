"""Print the record paths of failed points (for `make rerun-failed`): `python -m snnbench.tables.failed [RESULTS]`."""

from __future__ import annotations

import sys
from pathlib import Path

from snnbench import families
from snnbench.jsonfile import DamagedFile, read_json


def record_paths(results: Path) -> list[Path]:
    """Every record under results/, found with the point patterns of all families."""
    found = set()
    for name in families.names():
        found.update(results.glob(f"*/{families.get(name).point_glob()}/record.json"))
    return sorted(found)


def failed_records(results: Path) -> list[Path]:
    """Records that say failed; a damaged record (cut off by a full disk) counts as failed too."""
    failed = []
    for path in record_paths(results):
        try:
            if read_json(path)["status"] == "failed":
                failed.append(path)
        except DamagedFile:
            failed.append(path)
    return failed


if __name__ == "__main__":
    for path in failed_records(Path(sys.argv[1] if len(sys.argv) > 1 else "results")):
        print(path)
