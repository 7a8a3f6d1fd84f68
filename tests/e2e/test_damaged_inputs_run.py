"""End to end: an exported PD14 network (pd14.network_seed) damaged between runs, through the real
workflow and NEST. Each damaged file ends in one line naming it, is set aside as <name>.damaged
(nothing deleted) and is made again, and the record of the point that then runs names the digest of
the file it read. Cut short or replaced by random bytes, network.npz is found before any job (its size,
its zip directory); replaced by another valid network of the same size, where the point reads it (its
digest): the point's job fails in that one line and the next run makes the network and the point again.

Two networks at N = 0.01, K = 0.05 (771 neurons, 149 442 synapses, both files of one size) and one point
reading the first, 100 ms; each run aims at that point's record (no tables: seconds per run).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import copy_workflow, snakemake

pytestmark = pytest.mark.slow

PD14 = {"neuron_scale": 0.01, "indegree_scale": 0.05, "t_presim_ms": 50, "t_sim_ms": 100}
NETWORK = "networks/pd14/N0.01_K0.05_seed1"
OTHER = "networks/pd14/N0.01_K0.05_seed2"
RECORD = "results/net1/nest/nodes1_ranks1_threads1/N0.01_K0.05/seed1/record.json"


def _experiment(name: str, network_seed: int) -> dict:
    return {
        "name": name,
        "simulators": ["nest"],
        "scaling": "strong",
        "resources": {"threads_per_rank": [1]},
        "pd14": {**PD14, "network_seed": network_seed},
        "seeds": [1],
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    workdir = copy_workflow(tmp_path_factory.mktemp("damaged-inputs"))
    config = {"experiments": [_experiment("net1", 1), _experiment("net2", 2)]}
    (workdir / "config" / "damaged.yaml").write_text(yaml.safe_dump(config))
    other = RECORD.replace("net1", "net2")
    run(workdir, RECORD, other)
    return workdir


def run(workdir: Path, *targets: str, forcerun: bool = False, check: bool = True):
    """Snakemake aimed at `targets` (forcerun: the point's record made again, as `make rerun` does)."""
    force = ("--forcerun", RECORD) if forcerun else ()
    return snakemake(workdir, *targets, *force, "--configfile", "config/damaged.yaml", check=check)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_made_again_and_read(workdir: Path) -> None:
    """The network exported again and the point's record naming the digest of the file it read."""
    description = json.loads((workdir / NETWORK / "description.json").read_text())
    rec = json.loads((workdir / RECORD).read_text())
    assert rec["status"] == "ok", rec["failure"]
    assert rec["model_results"]["network"]["sha256"] == sha256(workdir / NETWORK / "network.npz")
    assert description["sha256"] == sha256(workdir / NETWORK / "network.npz")


def warnings(proc) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if ".damaged" in line or "would be" in line]


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda data: data[: len(data) // 2], "has {size} bytes where its description records {full}"),
        (lambda data: os.urandom(len(data)), "is not a readable npz file (File is not a zip file)"),
    ],
    ids=["cut-short", "random-bytes"],
)
def test_a_damaged_network_is_set_aside_before_any_job_and_exported_again(workdir, damage, problem):
    network = workdir / NETWORK / "network.npz"
    full = network.stat().st_size
    damaged = damage(network.read_bytes())
    network.write_bytes(damaged)
    proc = run(workdir, RECORD, forcerun=True)
    named = problem.format(size=len(damaged), full=full)
    assert warnings(proc) == [
        f"{NETWORK}/network.npz {named}; set aside as network.npz.damaged and description.json.damaged, made again "
        "before a point reads it"
    ]
    assert (workdir / NETWORK / "network.npz.damaged").read_bytes() == damaged
    assert (workdir / NETWORK / "description.json.damaged").exists()
    assert_made_again_and_read(workdir)


def test_another_valid_network_fails_its_point_in_one_line_and_is_made_again_on_the_next_run(workdir):
    """Of the same size, it passes the checks before the jobs; its digest is checked where it is read."""
    original = sha256(workdir / NETWORK / "network.npz")
    substitute = (workdir / OTHER / "network.npz").read_bytes()
    assert len(substitute) == (workdir / NETWORK / "network.npz").stat().st_size  # the size check cannot tell
    (workdir / NETWORK / "network.npz").write_bytes(substitute)
    proc = run(workdir, RECORD, forcerun=True, check=False)
    assert proc.returncode != 0  # the job failed: its point did not run what it was asked
    path = (workdir / NETWORK / "network.npz").resolve()
    line = (
        f"{path} is not the file description.json records (sha256 {hashlib.sha256(substitute).hexdigest()[:16]}…, "
        f"recorded {original[:16]}…); set aside as network.npz.damaged and description.json.damaged, made again on "
        "the next run"
    )
    assert line in (proc.stdout + proc.stderr).splitlines()
    assert not (workdir / RECORD).exists()  # no record of a run that did not happen
    assert (workdir / NETWORK / "network.npz.damaged").read_bytes() == substitute
    assert not (workdir / NETWORK / "description.json").exists()
    run(workdir, RECORD)  # the next run: the network made again, then the point
    assert_made_again_and_read(workdir)
    assert sha256(workdir / NETWORK / "network.npz") == original


def test_a_description_cut_short_is_set_aside_and_derived_again(workdir):
    description = workdir / NETWORK / "description.json"
    text = description.read_text()
    description.write_text(text[: len(text) // 2])
    proc = run(workdir, RECORD, forcerun=True)
    (line,) = warnings(proc)
    assert line.startswith(f"{NETWORK}/description.json is damaged (") and line.endswith(
        "; set aside as description.json.damaged, made again before a point reads it"
    )
    assert (workdir / NETWORK / "description.json.damaged").read_text() == text[: len(text) // 2]
    assert_made_again_and_read(workdir)
