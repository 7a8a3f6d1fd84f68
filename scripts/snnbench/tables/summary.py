"""The lines a run ends with (Snakemake's onsuccess and onerror; a dry run calls neither): per experiment, how
many of its points are ok, failed and invalid, read from its table, and where its tables and figures are.

Read from results/<experiment>/points.csv as collect wrote it: `status` (ok, failed, skipped), `valid` (false
for an ok point whose activity or validation failed; empty where not judged) and, where the table has it,
`disturbed` (true where other processes took the point's CPUs while it ran).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from snnbench.machine import interference
from snnbench.paths import RESULTS

# More experiments than this are summed up in one line (a campaign of many stays a few lines).
SHOWN = 8


def counts(table: Path) -> Counter:
    """Points of one points.csv by what the summary says of them: points, each status (ok, failed, skipped),
    invalid (ok points judged not valid) and, only where the table has that column, disturbed."""
    found = Counter()
    with open(table, newline="") as rows:
        reader = csv.DictReader(rows)
        if "disturbed" in (reader.fieldnames or []):
            found["disturbed"] = 0  # named in the summary even where no point was
        for row in reader:
            status = row.get("status") or "unknown"
            found["points"] += 1
            found[status] += 1
            found["invalid"] += status == "ok" and _false(row.get("valid"))
            if "disturbed" in found:
                found["disturbed"] += _true(row.get("disturbed"))
    return found


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _false(value: str | None) -> bool:
    return (value or "").strip().lower() == "false"


def experiment_line(experiment: str, results: str = RESULTS) -> str:
    """One experiment in one line: its points by status, then its table and figures."""
    return _experiment(experiment, results)[0]


def _experiment(experiment: str, results: str) -> tuple[str, Counter]:
    """experiment_line's line and the counts it was made from (empty where the table is missing or unreadable)."""
    folder = Path(results, experiment)
    table = folder / "points.csv"
    if not table.is_file():
        return f"  {experiment}: no table yet ({table} is made once its points have run)", Counter()
    try:
        found = counts(table)
    except (OSError, UnicodeDecodeError, csv.Error) as error:  # the summary never ends a run badly
        return f"  {experiment}: {table} cannot be read ({error})", Counter()
    noun = "point" if found["points"] == 1 else "points"
    parts = [f"{found['ok']} ok ({found['invalid']} invalid)", f"{found['failed']} failed"]
    parts += [f"{found[status]} {status}" for status in sorted(found) if status not in _NOT_STATUS]
    if "disturbed" in found:
        parts.append(f"{found['disturbed']} disturbed")
    made = ["points.csv"] + (["figures/"] if (folder / "figures").is_dir() else [])
    return f"  {experiment}: {found['points']} {noun}: {', '.join(parts)} -> {folder}/ ({', '.join(made)})", found


# Keys of counts() that are not a status of their own (ok and failed are always named).
_NOT_STATUS = {"points", "ok", "failed", "invalid", "disturbed"}


def lines(experiments: list[str], results: str = RESULTS, shown: int = SHOWN) -> list[str]:
    """The summary of a run of these experiments: a heading, one line per experiment (the first `shown`),
    and one line for the rest."""
    if not experiments:
        return []
    out = ["snnbench: the experiments' points (invalid: ok but not valid; see each points.csv for why)"]
    made = [_experiment(name, results) for name in experiments[:shown]]
    out += [line for line, _ in made]
    rest = experiments[shown:]
    if rest:
        out.append(f"  and {len(rest)} more experiments: {results}/<experiment>/points.csv")
    if any(found["disturbed"] for _, found in made):
        out.append(DISTURBED)
    return out


# Why points are disturbed where nothing else ran: Snakemake started points side by side (run without the
# profile, whose point_slots lets one run at a time).
DISTURBED = (
    f"  disturbed: others took over {interference.DISTURBED_ABOVE:.0%} of a point's CPUs while it ran (ringed in "
    "the figures); points side by side on one machine disturb each other: --profile profiles/local runs one at a time"
)
