"""References per machine through the real workflow: a point's record and row name the machine of
the config (`machine:`); its hardware record lies beside the record, shows in provenance.html and
travels in the archive; rule regression compares the table only with references of its own machine."""

from __future__ import annotations

import json
import socket
import tarfile

import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake
from snnbench.results.regression import NO_REFERENCE

pytestmark = pytest.mark.slow

POINT = "results/machines/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"


def write_config(workdir, name: str, **top) -> str:
    experiment = dict(TINY, name="machines", resources={"threads_per_rank": [1]})
    config = {"experiments": [experiment], "machine": {"site": "alpha", "partition": "cpu"}, **top}
    (workdir / "config" / name).write_text(yaml.safe_dump(config))
    return f"config/{name}"


def regression(workdir, *baselines: str) -> pd.DataFrame:
    (workdir / "results/regression.csv").unlink(missing_ok=True)
    configfile = write_config(workdir, "regression.yaml", regression={"baseline": list(baselines)})
    snakemake(workdir, "results/regression.csv", "--configfile", configfile)
    return pd.read_csv(workdir / "results/regression.csv", keep_default_na=False)


def test_regression_against_references_of_two_machines(tmp_path):
    workdir = copy_workflow(tmp_path)
    snakemake(workdir, "--configfile", write_config(workdir, "run.yaml"))
    rec = json.loads((workdir / POINT / "record.json").read_text())
    assert rec["provenance"]["machine"] == {"name": "alpha:cpu", "site": "alpha", "partition": "cpu"}
    host = socket.gethostname()
    assert rec["hardware"] == [f"hardware/{host}.json"] and (workdir / POINT / rec["hardware"][0]).exists()
    assert f"{host}: " in (workdir / "results/machines/provenance.html").read_text()
    points = pd.read_csv(workdir / "results/points.csv")
    assert points["machine"].tolist() == ["alpha:cpu"]
    snakemake(workdir, "results/archives/machines.tar.gz", "--configfile", "config/run.yaml")
    with tarfile.open(workdir / "results/archives/machines.tar.gz") as tar:
        assert f"{POINT}/hardware/{host}.json" in tar.getnames()  # the hardware record travels with the record

    # References of two machines: alpha's the table itself, beta's twice as fast (against them
    # the table would be a slowdown).
    references = workdir / "references"
    references.mkdir()
    points.to_csv(references / "alpha.csv", index=False)
    times = [c for c in points if c.startswith("time_") or c == "real_time_factor"]
    points.assign(machine="beta:gpu", **{c: points[c] / 2 for c in times}).to_csv(references / "beta.csv", index=False)
    record_mtime = (workdir / POINT / "record.json").stat().st_mtime_ns

    ratios = regression(workdir, "references/alpha.csv", "references/beta.csv")
    assert ratios["machine"].tolist() == ["alpha:cpu"] and ratios["reference"].tolist() == [""]
    assert ratios["ratio_time_simulate_s"].tolist() == pytest.approx([1.0]) and not ratios["slowdown"].any()
    ratios = regression(workdir, "references/beta.csv")
    assert ratios["reference"].tolist() == [NO_REFERENCE] and not ratios["slowdown"].any()
    assert NO_REFERENCE in (workdir / "logs/analyze/regression.log").read_text()
    assert (workdir / POINT / "record.json").stat().st_mtime_ns == record_mtime  # no simulation reran
