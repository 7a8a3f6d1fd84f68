"""A finished point's own files found damaged before any job (snnbench.planning.before_jobs): spikes that are
not an .npz of spikes, a spec that is neither the plan for its folder nor what its point ran, a record of
another point; and collect, which reads no record whose point is not the plan (snnbench.tables.collect).
Real files of a planned campaign, synthetic records; no simulator."""

from __future__ import annotations

import copy
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import BOUNDS, finished_points
from snnbench.jsonfile import write_json
from snnbench.planning import before_jobs
from snnbench.tables.collect import collect_tables


@pytest.fixture
def campaign(tmp_path, monkeypatch):
    """Two finished points (seeds 1 and 2): spec, record and spikes as the workflow writes them."""
    monkeypatch.chdir(tmp_path)
    return finished_points()


def second(campaign) -> str:
    return list(campaign.points)[1]


def npz_of(**arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


@pytest.mark.parametrize(
    "content, problem",
    [
        (lambda size: os.urandom(size), "is not a readable npz file (File is not a zip file)"),
        (lambda size: npz_of(senders=np.array([1])), "holds no array times_ms"),
    ],
    ids=["random-bytes", "no-times"],
)
def test_damaged_spikes_are_named_and_set_aside_before_any_job(campaign, content, problem):
    spikes = Path(second(campaign), "spikes.npz")
    damaged = content(spikes.stat().st_size)
    spikes.write_bytes(damaged)
    (line,) = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=True)
    assert line == f"{spikes} {problem}; would be set aside, its point runs again" and spikes.exists()
    (line,) = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
    assert line == f"{spikes} {problem}; set aside as spikes.npz.damaged, its point runs again"
    assert not spikes.exists() and spikes.with_name("spikes.npz.damaged").read_bytes() == damaged
    assert zipfile.is_zipfile(Path(list(campaign.points)[0], "spikes.npz"))  # the other point's stay
    assert before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False) == []


def test_a_spec_edited_by_hand_is_named_and_written_again_from_the_plan(campaign):
    path = second(campaign)
    edited = copy.deepcopy(campaign.points[path])
    edited["model"]["t_sim_ms"] = 300
    write_json(edited, f"{path}/spec.json")
    (line,) = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
    assert line == (
        f"{path}/spec.json is not what it should be (not the plan for its path, nor what its point ran: "
        f"model.t_sim_ms 300, planned {campaign.points[path]['model']['t_sim_ms']}); set aside as spec.json.damaged, "
        "written again from the plan"
    )
    assert json.loads(Path(path, "spec.json").read_text()) == campaign.points[path]
    assert json.loads(Path(path, "spec.json.damaged").read_text()) == edited


def test_a_spec_its_point_ran_under_a_config_changed_since_is_left_to_snakemake(campaign):
    """Spec and record agree on what ran; the plan changed since: Snakemake reruns the point for its params."""
    path = second(campaign)
    ran = copy.deepcopy(campaign.points[path])
    ran["model"]["t_sim_ms"] = 300
    write_json(ran, f"{path}/spec.json")
    write_json({**json.loads(Path(path, "record.json").read_text()), "point": ran}, f"{path}/record.json")
    assert before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False) == []


def test_a_record_of_another_point_is_named_and_set_aside(campaign):
    path = second(campaign)
    rec = json.loads(Path(path, "record.json").read_text())
    rec["point"]["seed"] = 99
    write_json(rec, f"{path}/record.json")
    (line,) = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
    assert line == (
        f"{path}/record.json is not what it should be (it is the record of point {path[:-1]}99: seed 99, planned 2); "
        "set aside as record.json.damaged, its point runs again"
    )


def test_collect_reads_no_record_whose_point_is_not_the_plan(campaign):
    """A record of an edited spec that a run ran (spec and record agree, within the point's folder): its
    point shows failed, as planned, saying why and what to do."""
    path = second(campaign)
    rec = json.loads(Path(path, "record.json").read_text())
    rec["point"]["model"]["t_sim_ms"] = 300
    write_json(rec, f"{path}/record.json")
    records = [f"{p}/record.json" for p in campaign.points]
    points, _, _ = collect_tables(records, BOUNDS, planned=campaign.points)
    row = points.set_index("path").loc[path]
    planned = campaign.points[path]["model"]["t_sim_ms"]
    assert row["status"] == "failed" and row["t_sim_ms"] == planned
    assert row["failure_reason"] == (
        f"{path}/record.json is of another point than the plan (model.t_sim_ms 300, planned {planned}): not read; "
        f"run the point again (snakemake --forcerun {path}/spec.json: its spec is made again from the plan)"
    )
    assert set(points.set_index("path").drop(index=path)["status"]) == {"ok"}
    unplanned, _, _ = collect_tables(records, BOUNDS)  # (the tools that collect outside a run)
    assert unplanned.set_index("path").loc[path, "t_sim_ms"] == 300
