"""Draw a PD14 network with NEST and export it (rule describe_network, the `network_seed` key):
`python -m snnbench.network.simulators.nest.export PARAMS_JSON OUT_JSON`.

NEST is the reference: the network is drawn exactly as NEST's PD14 builder draws it for a point
(snnbench.network.simulators.nest.pd14), on one thread with the network seed as NEST's seed (so the
export does not depend on the machine), and read back with GetConnections: NEST's own weights
and its delays on the grid of time steps. The file's format: snnbench.network.models.pd14_exported.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from snnbench.network.models import pd14_exported
from snnbench.network.simulators.nest.pd14 import NestBackend
from snnbench.network.simulators.nest_kernel import build_info


def draw(params: dict) -> tuple[NestBackend, pd14_exported.ExportedNetwork]:
    """The network NEST draws from the network seed, as arrays."""
    # Without network_seed: NEST draws the network here (from the network seed as its seed), reads none.
    size = {name: params[name] for name in ("neuron_scale", "indegree_scale")}
    model = {**size, "input": "dc", "record_spikes": False, "t_presim_ms": 0.0}
    spec = {"seed": params["network_seed"], "resources": {"threads_per_rank": 1}, "model": model}
    nest_pd14 = NestBackend(spec)
    nest_pd14.setup()
    nest_pd14.create()
    nest_pd14.connect()
    nest = nest_pd14.nest
    first_id = int(nest_pd14.populations[0][0].global_id)
    columns: dict[str, list[np.ndarray]] = {"source": [], "target": [], "weight": [], "delay": []}
    for synapse_model in nest_pd14.synapse_models:  # one source population at a time bounds the lists
        found = nest.GetConnections(synapse_model=synapse_model).get(list(columns))
        for name, values in found.items():
            columns[name].append(np.asarray(values))
    v0 = np.concatenate([np.asarray(p.V_m, dtype=float) for p in nest_pd14.populations])
    network = pd14_exported.ExportedNetwork(
        num_neurons=np.asarray(nest_pd14.net.num_neurons),
        v0_mV=v0,
        source=(np.concatenate(columns["source"]) - first_id).astype(np.int32),
        target=(np.concatenate(columns["target"]) - first_id).astype(np.int32),
        weight_pA=np.concatenate(columns["weight"]).astype(float),
        delay_ms=np.concatenate(columns["delay"]).astype(float),
    )
    return nest_pd14, network


def main(params_path: str, out_path: str) -> None:
    params = json.loads(Path(params_path).read_text())
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    nest_pd14, network = draw(params)
    drawn_s = time.perf_counter() - start
    written = pd14_exported.write(out.parent, network)
    build = build_info(nest_pd14.nest)
    description = {
        "model": pd14_exported.MODEL,
        "params": params,
        **written,
        "exported_by": f"NEST {build['version']}, 1 thread, rng_seed {params['network_seed']}",
        "totals": {"neurons": int(network.v0_mV.size), "synapses": int(network.source.size)},
        "num_neurons": network.num_neurons.tolist(),
        "drawn_s": round(drawn_s, 3),
    }
    out.write_text(json.dumps(description, indent=1))
    print(f"exported {description['totals']} in {drawn_s:.1f} s to {out.parent / written['file']}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
