"""The docs' claims about the training memory strategies hold at every size they name: each claimed ratio or range
is read from the text and checked against the rows of the docs' own measured tables (docs/families.md), so a
claim that disagrees with its table, or a table changed under its claim, fails here."""

from __future__ import annotations

import re

import pytest
from conftest import REPO

FAMILIES, MEASUREMENTS = REPO / "docs" / "families.md", REPO / "docs" / "measurements.md"

# The measured tables, by the start of their header line.
LINEAR = "| library | n | T | vanilla: peak MB / step s | checkpoint-neuron: memory, speed-up |"
WIDTHS = "| library | n | vanilla peak MB at T = 25 / 100 / 1 000 |"
INDEXING = "| library | T | vanilla: peak MB / step s | checkpoint-neuron: memory, speed-up | checkpoint-time-c25:"
GPU = "| library | T | vanilla: peak MB / step s | checkpoint-neuron: memory, speed-up | checkpoint-layer:"
CONV = "| library | T | vanilla: peak MB / step s | checkpoint-layer: peak MB, memory, speed-up |"

NEURON, CHUNKS = "checkpoint-neuron: memory, speed-up", "checkpoint-time-c25: memory, speed-up"
FROM_T100 = {"T": lambda t: int(t.replace(" ", "")) >= 100}
AT_T25 = {"T": lambda t: int(t.replace(" ", "")) == 25}
AT_T1000 = {"T": lambda t: int(t.replace(" ", "")) == 1000}


def libraries(*names: str) -> dict:
    return {"library": lambda cell: cell in names}


# (doc, the claim as a pattern whose groups are the claimed low and high (or one value), its sources:
# (table, column, which rows)). Every claim is checked where it stands: the pattern must still match.
CLAIMS = [
    (
        MEASUREMENTS,
        r"([\d.]+)-([\d.]+)x per 25-step chunk from T = 100",
        [(LINEAR, CHUNKS, FROM_T100), (WIDTHS, "checkpoint-time-c25 (T ≥ 100)", {}), (INDEXING, CHUNKS, {})],
    ),
    (MEASUREMENTS, r"at T = 25 a chunk is the whole sequence: ([\d.]+)-([\d.]+)x", [(LINEAR, CHUNKS, AT_T25)]),
    (
        MEASUREMENTS,
        r"([\d.]+)-([\d.]+)x per neuron at every T",
        [(LINEAR, NEURON, {}), (WIDTHS, "checkpoint-neuron (= layer)", {}), (INDEXING, NEURON, {})],
    ),
    (
        FAMILIES,
        r"the Linear's output \(checkpoint-neuron\) gives ([\d.]+)-([\d.]+)x at every T",
        [(LINEAR, NEURON, libraries("torch", "snntorch"))],
    ),
    (FAMILIES, r"at every T \(([\d.]+)-([\d.]+)x in SpikingJelly", [(LINEAR, NEURON, libraries("spikingjelly"))]),
    (
        FAMILIES,
        r"recomputing per 25-step chunk ([\d.]+)x from T = 100",
        [(LINEAR, CHUNKS, {**libraries("torch", "snntorch"), **FROM_T100})],
    ),
    (
        FAMILIES,
        r"from T = 100 \(([\d.]+)x in SpikingJelly\)",
        [(LINEAR, CHUNKS, {**libraries("spikingjelly"), **FROM_T100})],
    ),
    (
        FAMILIES,
        r"SpikingJelly's memopt ([\d.]+)-([\d.]+)x from T = 100",
        [(LINEAR, "library (memopt c25): memory, speed-up", FROM_T100)],
    ),
    (
        FAMILIES,
        r"at T = 25 every strategy gives ([\d.]+)-([\d.]+)x",
        [(LINEAR, column, AT_T25) for column in (NEURON, CHUNKS, "library (memopt c25): memory, speed-up")],
    ),
    (
        FAMILIES,
        r"every strategy is slower than storing \(speed-ups ([\d.]+)-([\d.]+)x\)",
        [(WIDTHS, "speed-ups of the strategies", {})],
    ),
    (
        FAMILIES,
        r"recomputing per chunk of 25 steps gives ([\d.]+)x \(Norse\)",
        [(INDEXING, CHUNKS, libraries("norse"))],
    ),
    (FAMILIES, r"\(Norse\) and ([\d.]+)x \(sinabs\)", [(INDEXING, CHUNKS, libraries("sinabs"))]),
    (FAMILIES, r"costs ([\d.]+)x for Rockpool", [(INDEXING, NEURON, libraries("rockpool"))]),
    (
        FAMILIES,
        r"brings the peak to ([\d.]+)x \(the reference loop\)",
        [
            (GPU, column, {**libraries("torch"), **AT_T1000})
            for column in (NEURON, "checkpoint-layer: memory, speed-up")
        ],
    ),
    (
        FAMILIES,
        r"\(the reference loop\) and ([\d.]+)x \(snnTorch\)",
        [(GPU, c, {**libraries("snntorch"), **AT_T1000}) for c in (NEURON, "checkpoint-layer: memory, speed-up")],
    ),
    (
        FAMILIES,
        r"Storing only the Conv/FC outputs \(checkpoint-neuron\) gives ([\d.]+)-([\d.]+)x",
        [(CONV, "checkpoint-neuron: peak MB, memory, speed-up", libraries("torch", "snntorch", "spikingjelly"))],
    ),
    (
        FAMILIES,
        r"so its peak is ([\d.]+)-([\d.]+)x",
        [(CONV, "checkpoint-layer: peak MB, memory, speed-up", libraries("torch", "spikingjelly"))],
    ),
    (
        FAMILIES,
        r"holds more than storing does \(([\d.]+)-([\d.]+)x",
        [(CONV, "checkpoint-layer: peak MB, memory, speed-up", libraries("snntorch"))],
    ),
]


def tables(doc) -> dict[str, list[dict[str, str]]]:
    """Each Markdown table of `doc` by its header line: its rows as {header cell: cell}."""
    found, lines = {}, doc.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|--"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows, j = [], i + 2
            while j < len(lines) and lines[j].startswith("|"):
                rows.append(dict(zip(header, (c.strip() for c in lines[j].strip("|").split("|")), strict=True)))
                j += 1
            found[line] = rows
    return found


def the_table(start: str) -> list[dict[str, str]]:
    matching = [rows for header, rows in tables(FAMILIES).items() if header.startswith(start)]
    assert len(matching) == 1, f"docs/families.md has {len(matching)} tables starting {start!r}"
    return matching[0]


def ratios_in(cell: str) -> list[float]:
    """The first ratio a cell gives, `0.80x` or a range `0.80-0.83x`: in a "memory, speed-up" cell the memory
    ratio (a peak in MB before it has no x)."""
    found = re.search(r"(\d+\.\d+)(?:-(\d+\.\d+))?x", cell)
    return [float(v) for v in found.groups() if v] if found else []


def measured(sources) -> list[float]:
    values = []
    for table, column, where in sources:
        rows = the_table(table)
        assert rows and column in rows[0], f"no column {column!r} in the table {table!r}"
        for row in rows:
            if all(test(row[name]) for name, test in where.items()):
                values += ratios_in(row[column])
    return values


def disagreement(text: str, claim: str, sources) -> str | None:
    """Why `claim` in `text` does not hold at every row of its sources (None: it does)."""
    found = re.search(claim, " ".join(text.split()))
    if not found:
        return f"no longer says {claim!r}: update the claim here with the text"
    claimed = [float(v) for v in found.groups() if v]
    values = measured(sources)
    if not values:
        return f"no rows behind {claim!r}"
    if (min(values), max(values)) != (claimed[0], claimed[-1]):
        return f"{found.group(0)!r}, where its tables give {sorted(values)}"
    return None


@pytest.mark.parametrize("doc, claim, sources", CLAIMS, ids=lambda v: v if isinstance(v, str) else None)
def test_each_claim_holds_at_every_size_of_its_table(doc, claim, sources):
    assert disagreement(doc.read_text(), claim, sources) is None, doc.name


def test_a_claim_that_disagrees_with_its_table_fails():
    # the claim the docs made before: chunks hold 0.44-0.62x at every T, where a 25-step chunk at T = 25 is the
    # whole sequence (0.73-0.82x)
    claim = r"([\d.]+)-([\d.]+)x per 25-step chunk at every T"
    why = disagreement("0.44-0.62x per 25-step chunk at every T", claim, [(LINEAR, CHUNKS, {})])
    assert why is not None and "0.82" in why
    assert disagreement("0.44-0.82x per 25-step chunk at every T", claim, [(LINEAR, CHUNKS, {})]) is None
    assert ratios_in("80, 0.69x, 0.02x") == [0.69] and ratios_in("0.80-0.83x") == [0.8, 0.83]
    assert ratios_in("not offered") == []
