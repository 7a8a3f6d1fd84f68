"""Oracle: our PD14 on NEST against INM-6's reference implementation (PyPI `microcircuit`).

Same scale (N = K = 0.1), Poisson input, 1 thread, two seeds each: the synapse counts must be
equal, and the population rates must agree within the seed-to-seed spread of the two seeds.
"""

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO, experiment, per_population, run_first_point, validated
from snnbench.network.judging import rate_agreement
from snnbench.network.models import pd14

pytestmark = pytest.mark.slow
SEEDS = (55, 56)
T_PRESIM_MS, T_SIM_MS = 100.0, 1000.0


def ours(seed, tmp_path):
    cfg = validated(
        experiment(
            resources={"threads_per_rank": [1]},
            pd14={"neuron_scale": 0.1, "indegree_scale": 0.1, "t_presim_ms": T_PRESIM_MS, "t_sim_ms": T_SIM_MS},
            seeds=[seed],
        )
    )
    rec = run_first_point(tmp_path, cfg, 600)
    assert rec["status"] == "ok", rec["failure"]
    return rec["network"]["num_synapses"], per_population(rec, "rate_hz")


def reference(seed, tmp_path):
    out = tmp_path / "oracle.json"
    args = ["0.1", "0.1", "1", str(seed), str(T_PRESIM_MS), str(T_SIM_MS), str(out)]
    subprocess.run(
        [sys.executable, "-m", "snnbench.network.oracle", *args],
        check=True,
        capture_output=True,
        cwd=REPO,
        env={"OMP_NUM_THREADS": "1", "PATH": ""},
    )
    result = json.loads(out.read_text())
    return result["num_synapses"], result["rates_hz"]


def test_same_network_and_rates_within_seed_spread(tmp_path):
    runs = {"ours": [], "reference": []}
    for seed in SEEDS:
        for name, run in (("ours", ours), ("reference", reference)):
            (tmp_path / f"{name}{seed}").mkdir()
            runs[name].append(run(seed, tmp_path / f"{name}{seed}"))
    expected = pd14.derive(0.1, 0.1).total_synapses
    assert {n for runs_ in runs.values() for n, _ in runs_} == {expected}

    rates = {name: np.array([[r[p] for p in pd14.POPULATIONS] for _, r in rs]) for name, rs in runs.items()}
    # Two seeds underestimate the spread; the rule allows twice it, and 2 % of the rate for agreeing seeds.
    agreement = rate_agreement.rates_agree(rates["reference"], rates["ours"])
    assert agreement["agrees"].all(), dict(zip(pd14.POPULATIONS, agreement["difference"].round(3), strict=True))
