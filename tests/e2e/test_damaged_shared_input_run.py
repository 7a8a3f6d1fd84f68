"""End to end: a shared input damaged between runs (an exported PD14 network: network.npz cut short or
random bytes, description.json cut short), then a run with a new seed that reads it. The damaged file is
named in one line, set aside and made again before the new point reads it; the finished points that read
the old good one are not run again (their records name the digest of what they read), in that run or the
next.

Tiny PD14 (tests/configs/tiny.yaml's sizes, 100 ms): one network, one more seed per case; each run aims at
the experiment's records (no tables).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake

pytestmark = pytest.mark.slow

PD14 = {**TINY["pd14"], "t_sim_ms": 100, "network_seed": 1}
NETWORK = f"networks/pd14/N{PD14['neuron_scale']}_K{PD14['indegree_scale']}_seed1"
POINT = f"results/net/nest/nodes1_ranks1_threads1/N{PD14['neuron_scale']}_K{PD14['indegree_scale']}/seed{{}}"


def run(workdir: Path, seeds: list[int]):
    experiment = dict(TINY, name="net", resources={"threads_per_rank": [1]}, pd14=PD14, seeds=seeds)
    (workdir / "config" / "net.yaml").write_text(yaml.safe_dump({"experiments": [experiment]}))
    records = [f"{POINT.format(seed)}/record.json" for seed in seeds]
    return snakemake(workdir, *records, "--configfile", "config/net.yaml")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("damaged-shared"))
    run(workdir, [1])
    return workdir


def finished(workdir: Path) -> dict[Path, int]:
    """Every finished point's files, by their modification time (ns)."""
    return {path: path.stat().st_mtime_ns for path in sorted((workdir / "results").rglob("seed*/*.*"))}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "name, damage, named",
    [
        ("network.npz", lambda data: data[: len(data) // 2], "has {size} bytes where its description records"),
        ("network.npz", lambda data: os.urandom(len(data)), "is not a readable npz file (File is not a zip file)"),
        ("description.json", lambda data: data[: len(data) // 2], "is damaged ("),
    ],
    ids=["network-cut-short", "network-random-bytes", "description-cut-short"],
)
def test_a_damaged_shared_input_is_made_again_and_reruns_no_finished_point(workdir, name, damage, named):
    before = finished(workdir)
    seeds = sorted({int(p.parent.name.removeprefix("seed")) for p in before})
    damaged = damage((workdir / NETWORK / name).read_bytes())
    (workdir / NETWORK / name).write_bytes(damaged)
    new = max(seeds) + 1
    proc = run(workdir, [*seeds, new])
    said = proc.stdout + proc.stderr
    (line,) = [line for line in said.splitlines() if ".damaged" in line]
    assert line.startswith(f"{NETWORK}/{name} {named.format(size=len(damaged))}")
    assert line.endswith(", made again before a point reads it")
    assert (workdir / NETWORK / f"{name}.damaged").read_bytes() == damaged
    assert said.count("rule execute_point_pd14") == 1  # the new seed's point alone
    assert {path: finished(workdir)[path] for path in before} == before  # the finished points untouched
    record = json.loads((workdir / POINT.format(new) / "record.json").read_text())
    assert record["status"] == "ok", record["failure"]
    assert record["model_results"]["network"]["sha256"] == sha256(workdir / NETWORK / "network.npz")
    assert json.loads((workdir / NETWORK / "description.json").read_text())["sha256"] == sha256(
        workdir / NETWORK / "network.npz"
    )
    # The next run: nothing to do (the network made again is newer than the records that read the old one).
    again = run(workdir, [*seeds, new])
    assert "rule " not in again.stdout + again.stderr, (again.stdout + again.stderr)[-3000:]
