"""INM-6's reference PD14 implementation (PyPI package `microcircuit`, a test dependency) run
the way snnbench runs its own: same scale, threads, seed, times and Poisson input, with the same
phase boundaries, so synapse counts, rates and wall times can be compared.

`python -m snnbench.network.oracle N_SCALE K_SCALE THREADS SEED T_PRESIM_MS T_SIM_MS OUT.json`
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def run(neuron_scale, indegree_scale, threads, seed, t_presim_ms, t_sim_ms) -> dict:
    start = time.perf_counter()
    import nest
    from microcircuit.network import Network
    from microcircuit.network_params import default_net_dict
    from microcircuit.sim_params import default_sim_dict
    from microcircuit.stimulus_params import default_stim_dict

    from snnbench.network import activity
    from snnbench.network.models import pd14

    net_dict = dict(default_net_dict, N_scaling=neuron_scale, K_scaling=indegree_scale, bg_input_type="poisson")
    with tempfile.TemporaryDirectory() as data_path:
        sim_dict = dict(
            default_sim_dict,
            data_path=data_path + "/",
            rng_seed=seed,
            local_num_threads=threads,
            print_time=False,
            store_metadata=False,
        )
        phases = {}
        net = Network(sim_dict, net_dict, dict(default_stim_dict))
        phases["setup"] = time.perf_counter() - start
        t = time.perf_counter()
        net.create()
        # Keep spikes in memory (not ASCII files) and skip the transient, as snnbench does.
        net.spike_recorders.set(record_to="memory", start=t_presim_ms)
        phases["create"] = time.perf_counter() - t
        t = time.perf_counter()
        net.connect()  # includes nest.Prepare()/Cleanup() in the reference implementation
        phases["connect_and_prepare"] = time.perf_counter() - t
        t = time.perf_counter()
        net.simulate(t_presim_ms)
        phases["presimulate"] = time.perf_counter() - t
        t = time.perf_counter()
        net.simulate(t_sim_ms)
        phases["simulate"] = time.perf_counter() - t
    phases["total"] = sum(phases.values())

    senders, times = [], []
    for recorder in net.spike_recorders:
        events = recorder.get("events")
        senders.append(np.asarray(events["senders"]))
        times.append(np.asarray(events["times"]))
    first_ids = [int(p[0].global_id) for p in net.pops]
    num_neurons = sum(len(p) for p in net.pops)
    # Besides the recurrent synapses, every neuron has one connection from its Poisson
    # generator and one to its spike recorder.
    recurrent = nest.num_connections - 2 * num_neurons
    sizes = [len(p) for p in net.pops]
    spikes = (np.concatenate(senders), np.concatenate(times))
    stats = activity.population_stats(*spikes, first_ids, sizes, t_sim_ms, pd14.POPULATIONS)
    return {
        "phases_s": phases,
        "num_synapses": int(recurrent),
        "rates_hz": {row["population"]: row["rate_hz"] for row in stats},
        "populations": list(pd14.POPULATIONS),
    }


if __name__ == "__main__":
    n, k, threads, seed, t_presim, t_sim, out = sys.argv[1:8]
    result = run(float(n), float(k), int(threads), int(seed), float(t_presim), float(t_sim))
    Path(out).write_text(json.dumps(result, indent=1))
