"""Files a point reads that another rule made (a network's description, PD14's exported network.npz, a
spec): the cheap checks before any job, the digest where a point reads them, setting a damaged one
aside as <name>.damaged in one line that names it, and the digest a reader notes of what it read
(snnbench.records.inputs; real files, no simulator)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import experiment
from snnbench import planning
from snnbench.network.models import multi_area, pd14_exported
from snnbench.planning import before_jobs
from snnbench.records import identity, inputs

SIZE = {"neuron_scale": 0.01, "indegree_scale": 0.05, "network_seed": 1}
KEY = "N0.01_K0.05_seed1"


def export(folder: Path, shift: float = 0.0, params: dict = SIZE) -> Path:
    """A small exported network as rule describe_network writes it (network.npz, then its description)."""
    folder.mkdir(parents=True, exist_ok=True)
    network = pd14_exported.ExportedNetwork(
        num_neurons=np.array([2, 1]),
        v0_mV=np.array([-65.0, -60.0, -58.0]) + shift,
        source=np.array([0, 1, 2], dtype=np.int32),
        target=np.array([1, 2, 0], dtype=np.int32),
        weight_pA=np.array([87.8, 87.8, -351.2]),
        delay_ms=np.array([1.5, 1.5, 0.8]),
    )
    written = pd14_exported.write(folder, network)
    description = folder / "description.json"
    description.write_text(json.dumps({"model": "pd14", "params": params, **written, "exported_by": "NEST (test)"}))
    return description


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "damage, problem, set_aside",
    [
        (lambda d, n: d.write_text(d.read_text()[:40]), "description.json is damaged (", ["description.json"]),
        (lambda d, n: d.write_text("[1, 2]"), "description.json is not a description (not a JSON object)", ["d"]),
        (
            lambda d, n: d.write_text(d.read_text().replace('"network_seed": 1', '"network_seed": 2')),
            "description.json was derived from other parameters than its folder's (network_seed differ)",
            ["description.json"],
        ),
        (lambda d, n: n.unlink(), "network.npz is missing", ["network.npz", "description.json"]),
        (
            lambda d, n: n.write_bytes(n.read_bytes()[:100]),
            "network.npz has 100 bytes where its description records ",
            ["network.npz", "description.json"],
        ),
        (
            lambda d, n: n.write_bytes(os.urandom(n.stat().st_size)),
            "network.npz is not a readable npz file (File is not a zip file)",
            ["network.npz", "description.json"],
        ),
    ],
    ids=["cut-short", "not-an-object", "other-parameters", "data-missing", "data-cut-short", "data-random"],
)
def test_the_cheap_check_names_what_is_wrong_and_what_to_set_aside(tmp_path, damage, problem, set_aside):
    description = export(tmp_path / KEY)
    assert inputs.description_problem(description, SIZE) is None
    damage(description, tmp_path / KEY / "network.npz")
    found, files = inputs.description_problem(description, SIZE)
    assert problem in found and found.startswith(str(tmp_path / KEY))
    assert [f.name for f in files] == [name if name != "d" else "description.json" for name in set_aside]


def test_nothing_made_yet_is_not_a_problem(tmp_path):
    assert inputs.description_problem(tmp_path / "description.json", SIZE) is None


def test_setting_aside_renames_and_a_dry_run_only_names(tmp_path):
    description = export(tmp_path / KEY)
    network = tmp_path / KEY / "network.npz"
    problems = {str(description): (f"{network} is missing", [network, description])}
    (line,) = inputs.set_aside_damaged(problems, dry_run=True)
    assert line == f"{network} is missing; would be set aside, made again before a point reads it"
    assert description.exists() and network.exists()
    (line,) = inputs.set_aside_damaged(problems, dry_run=False)
    assert line == (
        f"{network} is missing; set aside as network.npz.damaged and description.json.damaged, made again before a "
        "point reads it"
    )
    # The description stays for Snakemake (a finished point reads it as ancient: not run again), not read here
    # again; the note beside it, newer, makes its rule run.
    kept = ["description.json", "description.json.damaged", "description.json.set-aside", "network.npz.damaged"]
    assert sorted(p.name for p in (tmp_path / KEY).iterdir()) == kept
    assert (tmp_path / KEY / "description.json.damaged").read_bytes() == description.read_bytes()
    assert (tmp_path / KEY / "description.json.set-aside").read_text().endswith(f" {line}\n")
    assert inputs.remade_trigger(description) == [f"{description}.set-aside"]
    with pytest.raises(FileNotFoundError):
        inputs.read_json(description)
    assert inputs.description_problem(description, SIZE) is None  # set aside once


def test_a_json_input_is_read_with_the_digest_of_its_bytes_or_set_aside_in_one_line(tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text('{"path": "results/a"}')
    assert inputs.read_json(spec) == {"path": "results/a"}
    assert identity.inputs_read()[str(spec)] == sha256(spec)
    spec.write_text('{"path": "resu')
    with pytest.raises(inputs.DamagedInput) as named:  # where the workflow plans: named, not moved
        inputs.read_json(spec)
    assert str(named.value).startswith(f"{spec} is damaged (Unterminated string starting at: line 1, column 10)")
    assert spec.exists()
    with pytest.raises(inputs.DamagedInput) as damaged:  # where a point reads it
        inputs.read_json(spec, set_aside_damaged=True)
    assert str(damaged.value) == (
        f"{spec} is damaged (Unterminated string starting at: line 1, column 10); set aside as spec.json.damaged, "
        "made again on the next run"
    )
    assert "\n" not in str(damaged.value) and damaged.value.path == str(spec)
    assert not spec.exists() and (tmp_path / "spec.json.damaged").read_text() == '{"path": "resu'


def test_an_exported_network_is_read_by_its_digest_and_the_reader_reports_what_it_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    description = export(tmp_path / "networks" / "pd14" / KEY)
    network = description.parent / "network.npz"
    read = pd14_exported.read(SIZE)
    assert read.v0_mV.tolist() == [-65.0, -60.0, -58.0]
    assert pd14_exported.identity_read(SIZE) == {
        "network": {"description": KEY, "sha256": sha256(network), "exported_by": "NEST (test)"}
    }
    assert identity.inputs_read()[str(network)] == sha256(network)
    assert identity.inputs_read()[str(description)] == sha256(description)
    # The record takes what the ranks read, not what the description says.
    ranks = [{"network": {"description": KEY, "sha256": "read", "exported_by": "x"}}]
    assert pd14_exported.identity(SIZE, ranks) == {"network": ranks[0]["network"]}
    assert pd14_exported.identity(SIZE, [{}])["network"]["sha256"] is None
    assert pd14_exported.identity({**SIZE, "network_seed": None}, ranks) == {}


def test_another_valid_network_in_its_place_is_set_aside_with_its_description_where_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    description = export(tmp_path / "networks" / "pd14" / KEY)
    recorded = json.loads(description.read_text())["sha256"]
    export(tmp_path / "other", shift=1.0)  # the same size, other potentials
    network = description.parent / "network.npz"
    network.write_bytes((tmp_path / "other" / "network.npz").read_bytes())
    os.utime(network, ns=(1, 1))  # a version of the file no reader has seen
    with pytest.raises(inputs.DamagedInput) as damaged:
        pd14_exported.read(SIZE)
    assert str(damaged.value) == (
        f"{network} is not the file description.json records (sha256 {sha256(tmp_path / 'other' / 'network.npz')[:16]}"
        f"…, recorded {recorded[:16]}…); set aside as network.npz.damaged and description.json.damaged, made again on "
        "the next run"
    )
    assert sorted(p.name for p in description.parent.iterdir()) == ["description.json.damaged", "network.npz.damaged"]


def test_the_job_fails_on_the_line_of_a_damaged_input_its_point_died_of():
    line = "networks/pd14/x/network.npz is not the file description.json records (...); set aside as ..."
    log = f'Traceback (most recent call last):\n  File "x.py", line 1\nsnnbench.records.inputs.DamagedInput: {line}'
    assert inputs.damaged_line(f"simulation exited with code 1; last log lines:\n{log}") == line
    assert inputs.damaged_line("simulation exited with code 1; last log lines:\nMemoryError") is None


def test_before_the_jobs_damaged_descriptions_of_the_aimed_points_are_set_aside(tmp_path, monkeypatch):
    """PD14's exported network and the multi-area model's description, as the workflow's main process
    checks them; a dry run only names them."""
    monkeypatch.chdir(tmp_path)
    mam = experiment(name="mam", model="multi_area_model", simulators=["nest"])
    mam.pop("pd14")
    mam["multi_area_model"] = {"neuron_scale": 0.01, "indegree_scale": 0.01, "areas_simulated": ["V1", "V2"]}
    pd14 = experiment(name="pd14", resources={"threads_per_rank": [1]}, pd14={**experiment()["pd14"], **SIZE})
    campaign = planning.plan({"experiments": [pd14, mam]})
    (exported,) = [Path(path) for path in campaign.derivations if "/pd14/" in path]
    (derived,) = [Path(path) for path in campaign.derivations if "/multi_area_model/" in path]
    export(exported.parent, params=campaign.derivations[str(exported)]["params"])
    full = json.loads(exported.read_text())["bytes"]
    exported.with_name("network.npz").write_bytes(b"PK\x03\x04 cut")
    derived.parent.mkdir(parents=True)
    derived.write_text('{"parameters": {"neuron_scale": 0.01, ')
    lines = before_jobs.set_aside_damaged_inputs(campaign, campaign.points, dry_run=True)
    assert len(lines) == 2 and all("; would be set aside, made again before a point reads it" in x for x in lines)
    mam_point = next(spec for path, spec in campaign.points.items() if "/mam/" in path)
    with pytest.raises(inputs.DamagedInput) as named:  # its memory request, in a dry run: named, not moved
        multi_area.description(mam_point["model"], "multi_area_model")
    assert derived.exists() and str(named.value).endswith("; a run (not a dry run) sets it aside and makes it again")
    lines = sorted(before_jobs.set_aside_damaged_inputs(campaign, campaign.points, dry_run=False))
    assert lines == [
        f"{derived} is damaged (Expecting property name enclosed in double quotes: line 1, column 39); set aside as "
        "description.json.damaged, made again before a point reads it",
        f"{exported.with_name('network.npz')} has 8 bytes where its description records {full}; set aside as "
        "network.npz.damaged and description.json.damaged, made again before a point reads it",
    ]
    kept = ["description.json", "description.json.damaged", "description.json.set-aside"]
    assert sorted(p.name for p in derived.parent.iterdir()) == kept
    assert sorted(p.name for p in exported.parent.iterdir()) == [*kept, "network.npz.damaged"]
    assert before_jobs.set_aside_damaged_inputs(campaign, campaign.points, dry_run=False) == []
