"""Sharing and comparing results: archives round-trip, the regression view, provenance table."""

from __future__ import annotations

import io
import json
import tarfile

import pandas as pd
import pytest
from snnbench import planning
from snnbench.dev import synthetic
from snnbench.results import archive, regression, report
from snnbench.tables import collect
from test_figures import BOUNDS, TOLERANCE

EXPERIMENT = synthetic.experiment(name="shared", threads=(1, 2), seeds=(1, 2))
SPECS = planning.expand_points(EXPERIMENT)
FAILED = SPECS[1]["path"]
IMPLAUSIBLE = SPECS[2]["path"]


def write(root, slow=1.0):
    paths = synthetic.write_experiment(root, EXPERIMENT, failed=[FAILED], implausible=[IMPLAUSIBLE], slow=slow)
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    return paths, points


@pytest.fixture
def packed(tmp_path, monkeypatch):
    """An experiment's files written and packed from inside its working directory."""
    monkeypatch.chdir(tmp_path)
    paths, points = write(tmp_path)
    files = [p.relative_to(tmp_path) for kind in paths.values() for p in kind]
    out = tmp_path / "results/archives/shared.tar.gz"
    manifest = archive.pack(out, "shared", files, {"experiment": EXPERIMENT})
    return out, manifest, points, files


def test_archive_round_trips(packed, tmp_path):
    out, manifest, points, files = packed
    assert manifest["experiment"] == "shared" and manifest["config"]["experiment"] == EXPERIMENT
    assert sorted(manifest["files"]) == sorted(map(str, files)) and len(files) == 4 * len(SPECS)
    back = archive.read(out, tmp_path / "elsewhere", BOUNDS, TOLERANCE, label="cluster")
    assert (back["source"] == "cluster").all()
    pd.testing.assert_frame_equal(back.drop(columns="source"), points)
    assert back.set_index("path").loc[FAILED, "status"] == "failed"
    assert not back.set_index("path").loc[IMPLAUSIBLE, "valid"]
    assert back["job_wall_s"].notna().all()  # Snakemake's benchmarks travel too


def test_hardware_records_travel_with_their_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths, _ = write(tmp_path)
    record = paths["records"][0].relative_to(tmp_path)
    rec = json.loads(record.read_text())
    (record.parent / "hardware").mkdir()
    (record.parent / "hardware/n1.json").write_text('{"hostname": "n1"}')
    record.write_text(json.dumps(dict(rec, hardware=["hardware/n1.json", "hardware/gone.json"])))
    files = [p.relative_to(tmp_path) for p in paths["records"]]
    assert archive.hardware_files(files) == [str(record.parent / "hardware/n1.json")]
    manifest = archive.pack(tmp_path / "a.tar.gz", "shared", [*files, *archive.hardware_files(files)], {})
    assert str(record.parent / "hardware/n1.json") in manifest["files"]


def test_reading_applies_current_bounds(packed, tmp_path):
    out, _, points, _ = packed
    strict = dict(BOUNDS, min_rate_hz=100.0, bounds_from_data=False)  # every population now counts as silent
    back = archive.read(out, tmp_path / "strict", strict, TOLERANCE, label="cluster")
    assert points["valid"].sum() > 0 and not back["valid"].any()


def test_altered_archive_is_refused(packed, tmp_path):
    out, _, _, _ = packed
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(out) as src, tarfile.open(tampered, "w:gz") as dst:
        for member in src.getmembers():
            body = src.extractfile(member).read()
            if member.name.endswith("seed1/record.json"):
                rec = json.loads(body)
                rec["real_time_factor"] = 0.001
                body = json.dumps(rec).encode()
                member.size = len(body)
            dst.addfile(member, io.BytesIO(body))
    with pytest.raises(archive.ArchiveError, match="does not match its checksum"):
        archive.read(tampered, tmp_path / "t", BOUNDS, TOLERANCE, label="x")


def test_regression_flags_slowdowns(tmp_path, capsys):
    _, baseline = write(tmp_path / "base")
    _, same = write(tmp_path / "same")
    _, slower = write(tmp_path / "slow", slow=1.3)
    ratios = regression.compare(baseline, same, tolerance=0.1)
    assert len(ratios) == 2 and not ratios["slowdown"].any()
    assert ratios.filter(like="ratio_").to_numpy() == pytest.approx(1.0)

    ratios = regression.compare(baseline, slower, tolerance=0.1)
    assert ratios["slowdown"].all()
    assert ratios["ratio_time_simulate_s"].to_numpy() == pytest.approx([1.3, 1.3])
    assert ratios["ratio_real_time_factor"].to_numpy() == pytest.approx([1.3, 1.3])
    assert ratios["ratio_peak_rss_mb_sum"].to_numpy() == pytest.approx([1.0, 1.0])
    # 1 VP: the failed and the implausible seed are left out, the other seeds are compared.
    assert ratios["seeds"].tolist() == [1, 1] and ratios["seeds_baseline"].tolist() == [1, 1]
    assert not regression.compare(baseline, slower, tolerance=0.5)["slowdown"].any()

    base_csv, slow_csv = tmp_path / "base.csv", tmp_path / "slow.csv"
    baseline.to_csv(base_csv, index=False)
    slower.to_csv(slow_csv, index=False)
    assert regression.main([str(base_csv), str(slow_csv), "--tolerance", "0.1"]) == 1
    out = capsys.readouterr().out
    assert out.count("SLOWER") == 2 and "2 slower than 1.10x" in out and "1.300" in out
    assert regression.main([str(base_csv), str(base_csv)]) == 0


def test_provenance_table(tmp_path):
    paths, points = write(tmp_path)
    points["path"] = points["path"].astype(str)
    prov = report.provenance_table(paths["records"], points)
    assert len(prov) == len(SPECS) and prov["point"].tolist() == [s["path"] for s in SPECS]
    row = prov.set_index("point")
    assert row.loc[FAILED, "status"] == "failed" and "SIGKILL" in row.loc[FAILED, "failure"]
    assert "L6E silent" in row.loc[IMPLAUSIBLE, "why invalid"]
    assert row.loc[SPECS[0]["path"], "why invalid"] == "" and row.loc[SPECS[0]["path"], "valid"]
    assert (prov["scheduler job"] == "none (local)").all() and (prov["host"] == "synthetic").all()
    html = report.to_html(prov, "Provenance of shared")
    assert html.count("<tr") == len(SPECS) + 1 and "numpy" in html
