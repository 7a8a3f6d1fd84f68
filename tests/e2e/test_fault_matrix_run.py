"""End to end, the fault matrix's promise for several kinds at once (tests/unit/test_fault_matrix.py checks each
kind x fault through the code's own checks): after a finished run of three points, one point's record cut short,
another's spike statistics cut short and a folder in the place of a third's spec. The next run names each in one
line before any job and sets it aside as <name>.damaged; the point whose record was damaged runs again, the
statistics are made again where read and the spec is written again from the plan; the other points' own files stay
as they were (finished points are not run again), and the table shows the three as planned.

Tiny PD14 (tests/configs/tiny.yaml's sizes, 100 ms), seeds 1 to 3, NEST.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake

pytestmark = pytest.mark.slow

EXPERIMENT = dict(TINY, name="faults", resources={"threads_per_rank": [1]}, pd14={**TINY["pd14"], "t_sim_ms": 100})
POINTS = [f"results/faults/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed{seed}" for seed in (1, 2, 3)]


def run(workdir: Path):
    targets = [f"{point}/{name}" for point in POINTS for name in ("record.json", "validation.json")]
    return snakemake(workdir, *targets, "results/faults/points.csv", "--configfile", "config/faults.yaml")


def mtimes(workdir: Path, point: str) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (workdir / point).iterdir() if p.is_file()}


def test_damaged_files_of_several_kinds_are_named_set_aside_and_made_again(tmp_path):
    workdir = copy_workflow(tmp_path)
    config = {"experiments": [dict(EXPERIMENT, seeds=[1, 2, 3])]}
    (workdir / "config" / "faults.yaml").write_text(yaml.safe_dump(config))
    run(workdir)
    stats = workdir / POINTS[0] / "stats.npz"
    record = workdir / POINTS[1] / "record.json"
    spec = workdir / POINTS[2] / "spec.json"
    planned = spec.read_text()
    for path in (stats, record):
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    spec.unlink()
    spec.mkdir()
    before = {point: mtimes(workdir, point) for point in POINTS}

    proc = run(workdir)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if ".damaged" in line]
    assert len(lines) == 3, lines
    assert lines[0].startswith(f"{POINTS[0]}/stats.npz is not a readable npz file (")
    assert lines[0].endswith("; set aside as stats.npz.damaged, made again where read")
    assert lines[1].startswith(f"{POINTS[1]}/record.json is damaged (")
    assert lines[1].endswith("; set aside as record.json.damaged, its point runs again")
    assert lines[2] == (
        f"{POINTS[2]}/spec.json is damaged (a folder, not a file); set aside as spec.json.damaged, written again "
        "from the plan"
    )
    after = {point: mtimes(workdir, point) for point in POINTS}
    for point in (POINTS[0], POINTS[2]):  # finished: their record and spikes stay
        assert all(after[point][name] == before[point][name] for name in ("record.json", "spikes.npz"))
    assert after[POINTS[1]]["record.json"] > before[POINTS[1]]["spikes.npz"]  # ran again
    assert after[POINTS[0]]["stats.npz"] > before[POINTS[0]]["record.json"]  # made again where read
    assert spec.read_text() == planned and (spec.parent / "spec.json.damaged").is_dir()
    assert json.loads(record.read_text())["status"] == "ok"
    table = pd.read_csv(workdir / "results/faults/points.csv")
    assert table["seed"].tolist() == [1, 2, 3] and set(table["status"]) == {"ok"}
