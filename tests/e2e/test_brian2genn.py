"""Brian2GeNN in GeNN's CPU-only mode through the real workflow (two seeds), beside NEST and
brian2-cpp with Brian2GeNN's binned delays: GeNN 4.9 comes from the brian2genn environment's own
build (envs/brian2genn.yaml), nothing set by hand. The record names GeNN and its backends, no
synapse is lost to delay binning, and the rates agree by the project's rule with cpp_standalone
running the same binned delays. Its own file: the slowest fixture of the suite runs on a
pytest-xdist worker of its own, beside test_brian2.py's cpp_standalone run."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest
import yaml
from conftest import copy_workflow, snakemake
from snnbench import environments
from snnbench.network import compare

# Tiny PD14 with a window long enough to compare rates. Two seeds, the fewest the project's rule judges
# (compare.MIN_SEEDS): each Brian2GeNN point compiles its model for minutes (2026-11-26 on 2 cores, 4 delay
# bins: 14-18 min a point under the test suite's load, 53 min for this file with three seeds).
POINT = {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 100, "t_sim_ms": 500}
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def genn_beside_nest(tmp_path_factory):
    """Brian2GeNN (GeNN's CPU-only mode) beside NEST through the workflow: GeNN 4.9 comes from the
    environment's own build (envs/brian2genn.yaml), nothing set by hand."""
    if not environments.is_linked("brian2genn"):
        pytest.skip(".venv-brian2genn is not installed (make env-brian2genn)")
    workdir = copy_workflow(tmp_path_factory.mktemp("genn-e2e"))
    config = {
        "experiments": [
            {
                "name": "genn",
                # brian2-cpp with Brian2GeNN's binned delays (brian2.bin_delays): the same model as
                # Brian2GeNN runs, for the rates rule; NEST's exact delays for the comparison column.
                "simulators": ["nest", "brian2-genn-cpu", "brian2-cpp"],
                # Two delay bins (the default is 4): GeNN compiles the model's Synapses objects in one
                # compiler call per point, which fewer objects shorten (~450 code objects at 4 bins).
                "brian2": {"bin_delays": True, "delay_bins": 2},
                "scaling": "strong",
                "resources": {"threads_per_rank": [1]},
                "pd14": POINT,
                "seeds": SEEDS,
                "time_limit_min": 30,
            }
        ]
    }
    (workdir / "config" / "genn.yaml").write_text(yaml.safe_dump(config))
    env = {key: value for key, value in os.environ.items() if key != "GENN_PATH"}
    snakemake(workdir, "--configfile", "config/genn.yaml", timeout_s=3600, env=env)
    return workdir


@pytest.mark.slow
def test_brian2genn_cpu_beside_nest_through_the_workflow(genn_beside_nest):
    points = pd.read_csv(genn_beside_nest / "results/genn/points.csv")
    assert (points["status"] == "ok").all() and len(points) == 3 * len(SEEDS)
    genn = points[points["simulator"] == "brian2-genn-cpu"]
    assert (genn["num_synapses"] == genn["expected_synapses"]).all()
    # The project's rule against the same model with the same binned delays on cpp_standalone.
    rates = compare.rate_columns(points)
    cpp = points[points["simulator"] == "brian2-cpp"].sort_values("seed")[rates].to_numpy()
    verdict = compare.rates_agree(cpp, genn.sort_values("seed")[rates].to_numpy())
    margins = zip(verdict["difference"], verdict["tolerance"], strict=True)
    assert verdict["agrees"].all(), dict(zip(rates, margins, strict=True))
    # Against NEST the table says whether they agree; at this size GeNN's L6E runs ~20 % low and NEST's
    # varies little over seeds, so the rule fails in some runs (docs/families.md, open): the column is
    # checked to be there, not its value.
    assert genn["rates_agree_with_nest"].notna().all()
    rec = json.loads(next(genn_beside_nest.glob("results/genn/brian2-genn-cpu/*/*/seed1/record.json")).read_text())
    assert rec["simulator"]["device"] == "genn" and rec["phases_s"]["simulate"] > 0
    genn = rec["simulator"]["genn"]
    assert genn["from"] == "the environment's build" and genn["version"].startswith("4.9")
    assert "single_threaded_cpu_backend" in genn["backends"]
    sim = rec["simulator"]
    assert not sim["gpu"] and sim["build"]["binary_reused"] is False  # Brian2GeNN always rebuilds (make clean)
    # Delay binning (Brian2GeNN: one delay per Synapses object): at most delay_bins objects per projection,
    # some projection split, no synapse lost.
    projections, bins = sim["delay_binning"], sim["delay_bins"]
    assert len(projections) < sim["synapse_objects"] <= bins * len(projections)
    assert all(1 <= len(p["bins"]) <= bins and p["mean_abs_error_steps"] >= 0 for p in projections)
    assert sum(b["synapses"] for p in projections for b in p["bins"]) == rec["network"]["num_synapses"]
    assert rec["phases_s"]["presimulate"] > 0 and rec["activity"]["checked"]
