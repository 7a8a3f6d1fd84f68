"""The power-law STDP rule of hpc_benchmark's Brian2 builder against NEST's stdp_pl_synapse_hom:
the same pre- and postsynaptic spike trains (parrot neurons in NEST, scripted spikes in Brian2)
through one-to-one plastic synapses with the model's parameters and delay, and the weights after
the run equal. A last presynaptic spike makes NEST apply its pending facilitation (NEST applies
it lazily), and the trains have no spike pairs at the delay's edge, where the order of two
events in one time step would decide."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from conftest import REPO
from snnbench import environments
from snnbench.network.models import hpc_benchmark as hpc

pytestmark = pytest.mark.skipif(not environments.is_linked("brian2"), reason="make env-brian2 first")

PAIRS, RATE_HZ, T_MS = 12, 25.0, 2000.0

NEST_RUN = """
import json, sys
import nest
from snnbench.network.models import hpc_benchmark as hpc
trains = json.loads(sys.stdin.read())
nest.set_verbosity("M_ERROR")
nest.resolution = hpc.DT_MS
pre = nest.Create("parrot_neuron", len(trains["pre"]))
post = nest.Create("parrot_neuron", len(trains["post"]), params={"tau_minus": hpc.NEURON["tau_minus_ms"]})
for cells, key in ((pre, "pre"), (post, "post")):
    for cell, times in zip(cells, trains[key]):
        generator = nest.Create("spike_generator", params={"spike_times": [t - hpc.DT_MS for t in times]})
        nest.Connect(generator, cell, syn_spec={"delay": hpc.DT_MS})
nest.CopyModel("stdp_pl_synapse_hom", "plastic", {**hpc.STDP, "weight": trains["w0"]})
nest.Connect(pre, post, "one_to_one", {"synapse_model": "plastic", "delay": hpc.DELAY_MS, "receptor_type": 1})
nest.Simulate(trains["t_ms"])
conns = nest.GetConnections(synapse_model="plastic")
print(json.dumps(sorted(zip(conns.get("source"), conns.get("weight")))))
"""

BRIAN2_RUN = """
import json, math, sys
import numpy as np
import brian2 as b2
from snnbench.network.models import hpc_benchmark as hpc
from snnbench.network.simulators.brian2 import hpc_benchmark as builder
trains = json.loads(sys.stdin.read())
b2.prefs.codegen.target = "numpy"
b2.defaultclock.dt = hpc.DT_MS * b2.ms
n = len(trains["pre"])
steps = int(round(trains["t_ms"] / hpc.DT_MS)) + 1
fires = np.zeros((steps, n))
for k, times in enumerate(trains["post"]):
    fires[np.rint(np.array(times) / hpc.DT_MS).astype(int), k] = 1
post_fires = b2.TimedArray(fires, dt=b2.defaultclock.dt)
post = b2.NeuronGroup(n, "x : amp / second", threshold="post_fires(t, i) > 0.5", namespace={"post_fires": post_fires})
index = [k for k, times in enumerate(trains["pre"]) for _ in times]
pre = b2.SpikeGeneratorGroup(n, index, [t for times in trains["pre"] for t in times] * b2.ms)
d = hpc.DELAY_MS * b2.ms
stdp = {"stdp_lambda": hpc.STDP["lambda"], "stdp_alpha": hpc.STDP["alpha"], "stdp_mu": hpc.STDP["mu"],
        "tau_plus": hpc.STDP["tau_plus"] * b2.ms, "tau_minus": hpc.NEURON["tau_minus_ms"] * b2.ms,
        "e_per_tau_syn": math.e / (hpc.NEURON["tau_syn_ms"] * b2.ms)}
syn = b2.Synapses(pre, post, builder.STDP_MODEL, on_pre=builder.STDP_ON_PRE, on_post=builder.STDP_ON_POST,
                  delay={"pre": d, "post": 2 * d}, namespace=stdp)
syn.connect(j="i")
syn.w = trains["w0"] * b2.pA
b2.run(trains["t_ms"] * b2.ms)
print(json.dumps(list(np.asarray(syn.w[:] / b2.pA))))
"""


def trains(seed: int = 3) -> dict:
    """Poisson trains on the grid (ms), pre and post per pair, without the ambiguous pairs: a
    presynaptic spike at a postsynaptic one plus the delay, or both at one time; a last
    presynaptic spike after every postsynaptic one."""
    rng = np.random.default_rng(seed)
    dt, d = hpc.DT_MS, hpc.DELAY_MS
    grid = np.arange(10.0, T_MS - 50.0, dt)
    out = {"pre": [], "post": [], "w0": hpc.derive(0.1, 1.0).weight_exc_pA * 10, "t_ms": T_MS}
    for _ in range(PAIRS):
        post = np.round(grid[rng.random(grid.size) < RATE_HZ * dt * 1e-3], 1)
        pre = np.round(grid[rng.random(grid.size) < RATE_HZ * dt * 1e-3], 1)
        bad = np.isin(np.round(pre - d, 1), post) | np.isin(pre, post) | np.isin(np.round(pre + d, 1), post)
        pre = np.append(pre[~bad], T_MS - 20.0)
        out["pre"].append(pre.tolist())
        out["post"].append(post.tolist())
    return out


def run(python: str, code: str, data: dict) -> list:
    proc = subprocess.run(
        [python, "-c", code], input=json.dumps(data), capture_output=True, text=True, cwd=REPO, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_brian2s_rule_moves_the_weights_as_nest_does():
    data = trains()
    nest_weights = np.array([w for _, w in run(sys.executable, NEST_RUN, data)])
    brian2_weights = np.array(run(environments.python("brian2"), BRIAN2_RUN, data))
    assert np.abs(nest_weights - data["w0"]).min() > 1.0  # every synapse moved, by pA
    np.testing.assert_allclose(brian2_weights, nest_weights, rtol=1e-6)
