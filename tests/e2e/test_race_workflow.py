"""End to end: the race's accuracy and performance recipes through the real workflow on a tiny
PD14 point (NEST, one thread, same seed): the performance point records no spikes, yet its spike
and synaptic-event counts (NEST's kernel spike counter) equal the accuracy point's, energy is
"not measured" with the reason on this machine, and the standings figure and export exist."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import TINY, copy_workflow, snakemake

pytestmark = pytest.mark.slow

MODEL = dict(TINY["pd14"], t_presim_ms=100)
BASE = dict(TINY, resources={"threads_per_rank": [1]})
CONFIG = {
    "experiments": [
        dict(BASE, name="acc", race={"recipe": "accuracy"}, pd14=dict(MODEL, record_spikes=True)),
        dict(
            BASE,
            name="perf",
            race={"recipe": "performance", "accuracy_experiment": "acc"},
            pd14=dict(MODEL, record_spikes=False),
        ),
    ],
    "figures": {"experiment": {"time": ["real_time_factor"]}},
}
POINT = "nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("race"))
    (workdir / "config/race-test.yaml").write_text(yaml.safe_dump(CONFIG))
    snakemake(workdir, "--configfile", "config/race-test.yaml")
    return workdir


def record(workdir, experiment):
    return json.loads((workdir / f"results/{experiment}/{POINT}/record.json").read_text())


def test_performance_point_records_no_spikes_but_counts_them(finished):
    acc, perf = record(finished, "acc"), record(finished, "perf")
    assert acc["status"] == perf["status"] == "ok"
    with np.load(finished / f"results/perf/{POINT}/spikes.npz") as spikes:
        assert spikes["senders"].size == 0
    assert perf["populations"] == [] and "counter" in perf["spikes"]["source"]
    assert acc["spikes"]["source"].startswith("spike recorder")
    # Same seed, same network: the kernel counter of the measured window equals the recorded spikes.
    assert perf["spikes"]["total"] == acc["spikes"]["total"] == acc["spikes"]["counter_total"] > 0
    assert perf["synaptic_events"]["count"] == pytest.approx(acc["synaptic_events"]["count"])
    assert perf["point"]["race"]["recipe"] == "performance"


def test_energy_is_not_measured_here_and_says_why(finished):
    energy = record(finished, "perf")["energy"]
    if energy["measured"]:
        pytest.skip("this machine has energy counters")
    assert energy["simulate_j"] is None and "RAPL" in energy["not_measured"]
    assert energy["slurm"]["measured"] is False


def test_standings_and_export(finished):
    race_dir = finished / "results/perf/race"
    for name in ("standings.png", "standings.pdf", "standings.csv", "standings.md", "points.csv"):
        assert (race_dir / name).stat().st_size > 0
    table = pd.read_csv(race_dir / "standings.csv")
    assert (table["source"] == "published").sum() == 14
    mine = table[table["source"] == "this run"]
    assert len(mine) == 1 and mine.iloc[0]["rtf"] > 0 and mine.iloc[0]["e_syn_uj"] == "not measured"
    assert "counter" in mine.iloc[0]["synaptic_events_source"]
    linked = pd.read_csv(race_dir / "points.csv")
    assert linked.iloc[0]["linked_accuracy_path"] == f"results/acc/{POINT}"
    assert "this run: nest" in (race_dir / "standings.md").read_text()
