"""End to end: a finished point's own files damaged between runs, through the real workflow and NEST. Each
is named in one line before any job and set aside as <name>.damaged; its point runs again, no job dies on
it, the other points stay as they were and the tables show the point as the config plans it.

- spikes.npz replaced by random bytes (only running the point makes its spikes): point_statistics died
  of numpy's "contains pickled (object) data", in every run.
- spec.json edited by hand (another seed and length, the same path): the point ran the edited spec and
  points.csv showed it.
- a record of another point (a hand edit an earlier run ran): points.csv kept showing it.

Tiny PD14 (tests/configs/tiny.yaml's sizes, 100 ms), two seeds; each run aims at what `rule all` asks of
the points and at the experiment's table (no figures).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake

pytestmark = pytest.mark.slow

EXPERIMENT = dict(TINY, name="pts", resources={"threads_per_rank": [1]}, pd14={**TINY["pd14"], "t_sim_ms": 100})
POINTS = [f"results/pts/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed{seed}" for seed in (1, 2)]


def run(workdir: Path):
    targets = [f"{point}/{name}" for point in POINTS for name in ("record.json", "validation.json")]
    return snakemake(workdir, *targets, "results/pts/points.csv", "--configfile", "config/pts.yaml")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("damaged-point"))
    config = {"experiments": [dict(EXPERIMENT, seeds=[1, 2])]}
    (workdir / "config" / "pts.yaml").write_text(yaml.safe_dump(config))
    run(workdir)
    return workdir


def mtimes(workdir: Path, point: str) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (workdir / point).iterdir() if p.is_file()}


def damaged_lines(proc) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if ".damaged" in line]


def assert_rerun_as_planned(workdir: Path, before: dict[str, dict[str, int]]) -> None:
    """The second point ran again, the first did not (its validation, against its seed peer, is made again),
    and the table shows both as planned."""
    kept = ("spec.json", "record.json", "spikes.npz", "stats.npz")
    assert {name: mtimes(workdir, POINTS[0])[name] for name in kept} == {name: before[POINTS[0]][name] for name in kept}
    after = mtimes(workdir, POINTS[1])
    assert all(after[name] > before[POINTS[1]][name] for name in ("record.json", "spikes.npz", "stats.npz"))
    record = json.loads((workdir / POINTS[1] / "record.json").read_text())
    assert record["status"] == "ok" and record["point"]["seed"] == 2 and record["point"]["model"]["t_sim_ms"] == 100
    table = pd.read_csv(workdir / "results/pts/points.csv")
    assert table["seed"].tolist() == [1, 2] and set(table["t_sim_ms"]) == {100}
    assert set(table["status"]) == {"ok"}


def test_spikes_replaced_by_random_bytes_are_set_aside_and_the_point_runs_again(workdir):
    spikes = workdir / POINTS[1] / "spikes.npz"
    garbage = os.urandom(spikes.stat().st_size)
    spikes.write_bytes(garbage)
    before = {point: mtimes(workdir, point) for point in POINTS}
    proc = run(workdir)
    assert damaged_lines(proc) == [
        f"{POINTS[1]}/spikes.npz is not a readable npz file (File is not a zip file); set aside as "
        "spikes.npz.damaged, its point runs again"
    ]
    assert (workdir / POINTS[1] / "spikes.npz.damaged").read_bytes() == garbage
    assert_rerun_as_planned(workdir, before)


def _edit(path: Path, seed: int = 99, t_sim_ms: int = 200) -> None:
    spec = json.loads(path.read_text())
    spec["seed"], spec["model"]["t_sim_ms"] = seed, t_sim_ms
    path.write_text(json.dumps(spec, indent=1))


def test_a_spec_edited_by_hand_is_set_aside_and_written_again_from_the_plan(workdir):
    """Its record is of the plan: the point need not run again (Snakemake finds the spec it ran)."""
    planned = (workdir / POINTS[1] / "spec.json").read_text()
    _edit(workdir / POINTS[1] / "spec.json")
    before = {point: mtimes(workdir, point) for point in POINTS}
    proc = run(workdir)
    assert damaged_lines(proc) == [
        f"{POINTS[1]}/spec.json is not what it should be (its fields are of point {POINTS[1][:-1]}99: model.t_sim_ms "
        "200, planned 100; seed 99, planned 2); set aside as spec.json.damaged, written again from the plan"
    ]
    assert json.loads((workdir / POINTS[1] / "spec.json.damaged").read_text())["seed"] == 99
    assert (workdir / POINTS[1] / "spec.json").read_text() == planned
    assert "rule execute_point_pd14" not in proc.stdout + proc.stderr
    assert mtimes(workdir, POINTS[1])["record.json"] == before[POINTS[1]]["record.json"]
    table = pd.read_csv(workdir / "results/pts/points.csv")
    assert table["seed"].tolist() == [1, 2] and set(table["t_sim_ms"]) == {100}


def test_a_spec_edited_within_its_point_is_named_with_what_differs_from_the_plan(workdir):
    spec = workdir / POINTS[1] / "spec.json"
    _edit(spec, seed=2)  # the length alone: the same point, not the plan
    proc = run(workdir)
    assert damaged_lines(proc) == [
        f"{POINTS[1]}/spec.json is not what it should be (not the plan for its path, nor what its point ran: "
        "model.t_sim_ms 200, planned 100); set aside as spec.json.damaged, written again from the plan"
    ]
    assert json.loads(spec.read_text())["model"]["t_sim_ms"] == 100


def test_a_record_of_another_point_is_set_aside_and_its_point_runs_as_planned(workdir):
    """An edited spec that an earlier run ran: spec and record agree, of another seed than their folder's."""
    for name in ("spec.json", "record.json"):
        path = workdir / POINTS[1] / name
        content = json.loads(path.read_text())
        (content.get("point") or content).update(seed=99)
        path.write_text(json.dumps(content, indent=1))
    before = {point: mtimes(workdir, point) for point in POINTS}
    proc = run(workdir)
    other = f"{POINTS[1][:-1]}99"
    assert damaged_lines(proc) == [
        f"{POINTS[1]}/spec.json is not what it should be (its fields are of point {other}: seed 99, planned 2); "
        "set aside as spec.json.damaged, written again from the plan",
        f"{POINTS[1]}/record.json is not what it should be (it is the record of point {other}: seed 99, planned "
        "2); set aside as record.json.damaged, its point runs again",
    ]
    assert_rerun_as_planned(workdir, before)
