"""PyGeNN 5 (GeNN's CPU backend, `genn-cpu`) on tiny PD14 points through the real workflow beside
NEST: records, GeNN's phase timers, the synapse count, and validation against NEST (rates and KS).
Also the fact the delays rely on (GeNN's pipeline step) and failing early where a backend is missing.

Needs .venv-pygenn (`make env-pygenn`: PyGeNN built from genn-5.4.0.tar.gz, ~5-10 min once per
machine); skipped with the reason where it is missing.
"""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import (
    DEFAULT_FIGURES,
    REPO,
    assert_plausible,
    copy_workflow,
    experiment,
    per_population,
    run_first_point,
    snakemake,
    validated,
)
from snnbench import environments
from snnbench.dev import gpu_summary
from snnbench.network.models import pd14

TINY = {"neuron_scale": 0.02, "indegree_scale": 0.1, "t_presim_ms": 100, "t_sim_ms": 500}
SEEDS = [1, 2, 3]
PYGENN = environments.linked("pygenn")

needs_pygenn = pytest.mark.skipif(
    not environments.is_linked("pygenn"), reason=".venv-pygenn is not installed (make env-pygenn)"
)

# One source neuron driven to fire, one target per dendritic delay d: the step in which each
# target's V first moves, relative to the source's spike step.
PIPELINE_PROBE = """
import json, sys
from pygenn import GeNNModel, init_postsynaptic, init_weight_update
model = GeNNModel("float", "pipeline_probe", backend="single_threaded_cpu")
model.dt = 0.1
lif = {"C": 250.0, "TauM": 10.0, "Vrest": -65.0, "Vreset": -65.0, "Vthresh": -50.0, "Ioffset": 0.0, "TauRefrac": 100.0}
source = model.add_neuron_population("source", 1, "LIF", {**lif, "Ioffset": 2000.0}, {"V": -65.0, "RefracTime": 0.0})
source.spike_recording_enabled = True
delays = (0, 1, 3)
targets = model.add_neuron_population("targets", len(delays), "LIF", lif, {"V": -65.0, "RefracTime": 0.0})
synapses = model.add_synapse_population(
    "s", "DENSE", source, targets,
    init_weight_update("StaticPulseDendriticDelay", {}, {"g": 100.0, "d": 0}),
    init_postsynaptic("ExpCurr", {"tau": 0.5}))
synapses.max_dendritic_delay_timesteps = 5
model.build(sys.argv[1])
model.load(num_recording_timesteps=40)
synapses.vars["d"].view[:] = delays
synapses.vars["d"].push_to_device()
first = [None] * len(delays)
for step in range(40):
    model.step_time()
    targets.vars["V"].pull_from_device()
    for k, v in enumerate(targets.vars["V"].view):
        if first[k] is None and v != -65.0:
            first[k] = step
model.pull_recording_buffers_from_device()
spike_step = round(float(source.spike_recording_data[0][0][0]) / 0.1)
print(json.dumps({str(d): f - spike_step for d, f in zip(delays, first)}))
"""


@needs_pygenn
def test_a_spike_moves_its_targets_one_step_plus_the_dendritic_delay_later(tmp_path):
    """snnbench.network.simulators.genn gives GeNN NEST's delay in steps as the dendritic delay:
    right only if GeNN, like NEST, adds one step (NEST: a delay of D steps moves V in step x + 1 + D)."""
    out = subprocess.run(
        [str(PYGENN / "bin" / "python"), "-c", PIPELINE_PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"0": 1, "1": 2, "3": 4}


@pytest.fixture(scope="module")
def workflow_run(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("genn-e2e"))
    config = {
        "experiments": [
            {
                "name": "g",
                "simulators": ["nest", "genn-cpu"],
                "scaling": "strong",
                "resources": {"threads_per_rank": [1]},
                "pd14": TINY,
                "seeds": SEEDS,
            }
        ]
    }
    (workdir / "config" / "g.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "--configfile", "config/g.yaml", timeout_s=1800)
    return workdir


@pytest.mark.slow
@needs_pygenn
def test_genn_cpu_through_the_workflow_beside_nest(workflow_run):
    workdir = workflow_run
    expected = pd14.PD14().size({**TINY, "input": "poisson"}).total_synapses
    for seed in SEEDS:
        rec = json.loads(
            (workdir / f"results/g/genn-cpu/nodes1_ranks1_threads1/N0.02_K0.1/seed{seed}/record.json").read_text()
        )
        assert rec["status"] == "ok", rec["failure"]
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] == expected
        sim = rec["simulator"]
        assert sim["version"] == "5.4.0" and sim["backend"] == "single_threaded_cpu" and not sim["gpu"]
        assert sim["connectivity"] == "sparse" and sim["num_synapses_source"] == "row lengths read back from GeNN"
        assert ".venv-pygenn/" in sim["environment"]["executable"] and sim["synapse_objects"] == 55
        timers = rec["simulator_timers_s"]
        # GeNN's own timers in the phases that ran them; build and load around GeNN's calls.
        assert {"genn_build", "genn_load", "init", "init_sparse"} <= set(timers["prepare"])
        assert timers["presimulate"]["neuron_update"] > 0 and timers["simulate"]["neuron_update"] > 0
        assert (
            timers["simulate"]["neuron_update"] + timers["simulate"]["presynaptic_update"]
            <= rec["phases_s"]["simulate"]
        )
        assert rec["phases_s"]["prepare"] >= timers["prepare"]["genn_build"] + timers["prepare"]["genn_load"]
        assert rec["real_time_factor"] == pytest.approx(rec["phases_s"]["simulate"] / 0.5)
        assert_plausible(rec)
        assert sum(per_population(rec, "spikes").values()) > 0

    points = pd.read_csv(workdir / "results/g/points.csv")
    assert set(points["simulator"]) == {"nest", "genn-cpu"} and len(points) == 6
    genn = points[points["simulator"] == "genn-cpu"]
    assert genn["valid"].all() and (genn["connectivity"] == "sparse").all()
    assert genn["rates_agree_with_nest"].all(), genn[[c for c in points if c.startswith("rate_")]]
    assert genn["validation_checked"].all() and genn["validation_passed"].all(), genn["validation_problems"].tolist()
    assert genn["timer_simulate_neuron_update_s"].notna().all()
    # make bench-gpu's table, on these points: PyGeNN's connectivity apart, every rate agreeing with NEST's.
    summary = gpu_summary.pd14_summary(points).set_index("simulator")
    assert summary.loc["genn-cpu (sparse)", "rates vs NEST"].startswith("8/8 agree")
    assert summary.loc["genn-cpu (sparse)", "seeds"] == 3 and summary.loc["genn-cpu (sparse)", "RTF"] > 0
    for figure in DEFAULT_FIGURES:
        assert (workdir / f"results/g/figures/{figure}.png").stat().st_size > 1000


def cuda_backend_built() -> bool:
    probe = "import pygenn.genn_model as g; print('cuda' in g.backend_modules)"
    out = subprocess.run([str(PYGENN / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=120)
    return out.stdout.strip() == "True"


@needs_pygenn
def test_a_genn_point_without_the_cuda_backend_fails_early_with_the_reason(tmp_path):
    if cuda_backend_built():
        pytest.skip("this machine's PyGeNN has its CUDA backend")
    cfg = validated(experiment(simulators=["genn"], pd14=TINY, seeds=[1]))
    rec = run_first_point(tmp_path, cfg, 300)
    assert rec["status"] == "failed"
    assert "has no cuda backend (it has: single_threaded_cpu)" in rec["failure"]["reason"]
    assert rec["wall_time_s"] < 60  # before any code generation or compilation


def test_bench_gpu_plans_every_gpu_point(workflow_copy):
    """make bench-gpu cannot run without a GPU; its plan can: the PD14 GPU experiments' points and the
    training CUDA points, and the summary after them."""
    proc = snakemake(workflow_copy, "--configfile", "config/experiments/gpu.yaml", "--dry-run")
    planned = proc.stdout
    for name, simulators in {
        "pd14-gpu-small": ("nest", "genn", "brian2-genn", "brian2-cuda"),
        "pd14-gpu-small-procedural": ("genn",),
        "pd14-gpu-full": ("nest", "genn", "brian2-genn"),
        "pd14-gpu-full-procedural": ("genn",),
    }.items():
        scale = "N1_K1" if "full" in name else "N0.1_K0.1"
        for simulator in simulators:
            for seed in (55, 56):
                assert f"experiment={name}, point={simulator}/nodes1_ranks1_threads8/{scale}/seed{seed}" in planned
    snakemake(workflow_copy, "--configfile", "config/experiments/snn-training-gpu.yaml", "--dry-run")
    make = subprocess.run(["make", "-n", "bench-gpu"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert "config/experiments/gpu.yaml" in make.stdout and "snnbench.dev.gpu_summary" in make.stdout
