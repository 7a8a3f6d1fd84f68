"""End to end: the multi-area model through the real workflow (config/experiments/mam-ci.yaml): the
description derived once by INM-6's code in the model's environment, the reference run (INM-6's own
simulation), snnbench's NEST builder on 1 and 2 threads and PyGeNN's CPU backend over the seeds, every
record's synapse count the description's, rates judged against the reference by the project's rule,
the theory's rates in the records, the per-area figure."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
from conftest import VENV_BIN, copy_workflow

pytestmark = pytest.mark.slow

EXPERIMENTS = ("mam-ci", "mam-ci-threads")
DESCRIPTION = "networks/multi_area_model/N0.01_K0.01_ground_V1+V2/description.json"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("mam"))
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", "config/experiments/mam-ci.yaml"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return workdir


def test_the_description_is_derived_once_by_inm6s_code(finished):
    desc = json.loads((finished / DESCRIPTION).read_text())
    assert desc["source"]["model"] == "INM-6/multi-area-model" and desc["areas_simulated"] == ["V1", "V2"]
    assert desc["totals"]["populations"] == 16 and desc["totals"]["synapses"] == sum(
        p["n_syn"] for p in desc["projections"]
    )
    assert len(desc["areas"]) == 32 and desc["replacement_inputs"]  # 30 areas replaced by Poisson input
    assert set(desc["theory"]["rates_hz"]) >= {"V1-23E", "V2-6I"}
    log = (finished / "logs" / "networks" / "multi_area_model" / "N0.01_K0.01_ground_V1+V2.log").read_text()
    assert "105973 synapses" in log or f"{desc['totals']['synapses']} synapses" in log


def test_every_point_is_valid_with_the_descriptions_synapses(finished):
    desc = json.loads((finished / DESCRIPTION).read_text())
    for experiment in EXPERIMENTS:
        points = pd.read_csv(finished / "results" / experiment / "points.csv")
        assert (points["status"] == "ok").all() and points["valid"].astype(bool).all(), points["failure_reason"]
        assert (points["num_synapses"] == desc["totals"]["synapses"]).all()
        assert (points["expected_synapses"] == desc["totals"]["synapses"]).all()
        assert (points["num_neurons"] == desc["totals"]["neurons"]).all()
    threads = pd.read_csv(finished / "results" / "mam-ci-threads" / "points.csv")
    assert sorted(threads["threads_per_rank"].unique()) == [1, 2] and threads["seed"].nunique() == 2


def test_nest_and_genn_rates_agree_with_the_reference_by_the_projects_rule(finished):
    points = pd.read_csv(finished / "results" / "mam-ci" / "points.csv")
    assert sorted(points["simulator"].unique()) == ["genn-cpu", "nest", "nest-inm6"]
    assert (points.groupby("simulator")["seed"].nunique() == 3).all()  # the rule over three seeds
    others = points[points["simulator"] != "nest-inm6"]
    assert others["rates_agree_with_nest-inm6"].astype(bool).all(), others[["simulator", "seed"]]


def test_records_hold_the_theorys_rates_and_the_figures_show_the_areas(finished):
    record = next((finished / "results" / "mam-ci" / "nest").rglob("record.json"))
    rec = json.loads(record.read_text())
    theory = rec["model_results"]["theory_rates_hz"]
    assert set(theory) == {p["population"] for p in rec["populations"]} and all(r > 0 for r in theory.values())
    points = pd.read_csv(finished / "results" / "mam-ci" / "points.csv")
    assert "theory_rate_V1-23E_hz" in points and "rate_V1-23E_hz" in points
    for figure in ("areas", "scaling", "activity"):
        assert (finished / "results" / "mam-ci" / "figures" / f"{figure}.png").stat().st_size > 0
