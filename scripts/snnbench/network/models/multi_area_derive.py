"""The multi-area model's network description, derived by INM-6's own code (run, not copied): `python -m
snnbench.network.models.multi_area_derive PARAMS_JSON OUT_JSON` in the multi-area-model environment
(envs/multi-area-model.yaml), which keeps INM-6/multi-area-model v1.2.0 as a tree.

INM-6's `MultiAreaModel(..., simulation=False)` derives the network from its anatomical data: areas,
populations and their sizes, synapse numbers per projection, weights and delays, external input,
down-scaling (N_scaling, K_scaling) with the weight and DC compensation that goes with it. This module
reads what its simulation class (multiarea_model/simulation.py) would read to build the network in
NEST, with the same integer truncations, and writes it as plain data that every builder reads
(snnbench.network.models.multi_area documents the fields). The mean-field rates of its theory
(Theory.integrate_siegert) go in beside it. The tree is copied, since INM-6's code writes into it.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from snnbench import environments

RATES_FILE = "tests/fullscale_rates.json"  # the full-scale rates the compensation and the replacement use
# Cortico-cortical weight factors of the two states (Schmidt et al. 2018, PLoS CB: chi = 1.9, chi_I = 2.0
# for the metastable state; 1 for the ground state). v1.2.0's own defaults are the metastable state's.
STATES = {
    "ground": {"cc_weights_factor": 1.0, "cc_weights_I_factor": 1.0},
    "metastable": {"cc_weights_factor": 1.9, "cc_weights_I_factor": 2.0},
}


def model_spec(params: dict, tree: Path, all_areas: list[str]) -> dict:
    """INM-6's network spec for the description's parameters (snnbench.network.models.multi_area)."""
    connection = dict(STATES[params["state"]])
    if set(params["areas_simulated"]) != set(all_areas):
        connection["replace_non_simulated_areas"] = "het_poisson_stat"
        connection["replace_cc_input_source"] = str(tree / RATES_FILE)
    spec = {"N_scaling": params["neuron_scale"], "K_scaling": params["indegree_scale"]}
    spec["connection_params"] = connection
    if spec["N_scaling"] != 1 or spec["K_scaling"] != 1:
        spec["fullscale_rates"] = str(tree / RATES_FILE)
    return spec


def working_copy(into: Path) -> Path:
    """A writable copy of the environment's INM-6 tree with the config.py it reads."""
    tree = environments.running_source_tree()
    if tree is None or not (tree / "multiarea_model").is_dir():
        raise SystemExit("this interpreter stands on no multi-area-model tree (envs/multi-area-model.yaml)")
    copy = shutil.copytree(tree, into / "multi-area-model")
    (copy / "config_files").mkdir(exist_ok=True)  # where it writes each network's parameters (not in the source used)
    (into / "data").mkdir(exist_ok=True)  # its data_path: a simulation's files
    (copy / "config.py").write_text(f"base_path = {str(copy)!r}\ndata_path = {str(into / 'data')!r}\n")
    return copy


def populations(model, simulated: list[str]) -> list[dict]:
    """Every population of every area (the simulated ones flagged), with its input."""
    params = model.params["input_params"]
    found = []
    for i, key in enumerate(model.structure_vec):
        area, pop = key.split("-", 1)
        indegree = float(model.K[area][pop]["external"]["external"])
        found.append(
            {
                "area": area,
                "pop": pop,
                "simulated": area in simulated,
                "n": int(model.N[area][pop]),  # the simulation's int(N)
                "I_e": float(model.add_DC_drive[i]),
                "ext_poisson": {
                    "indegree": indegree,
                    "rate_total": float(params["rate_ext"]) * indegree,
                    "weight": float(model.W[area][pop]["external"]["external"]),
                    "delay": 1.0,  # none given: NEST's static_synapse default
                },
            }
        )
    return found


def projections(model, simulated: list[str], index: dict, dt_ms: float) -> list[dict]:
    """The projections between simulated areas with at least one synapse (the simulation's int())."""
    delays = model.params["delay_params"]
    found = []
    for target_area in simulated:
        for source_area in simulated:
            intra = target_area == source_area
            for tp in model.structure[target_area]:
                for sp in model.structure[source_area]:
                    n_syn = int(model.synapses[target_area][tp][source_area][sp])
                    if n_syn == 0:
                        continue
                    excitatory = "E" in sp
                    if intra:
                        mean_delay = delays["delay_e"] if excitatory else delays["delay_i"]
                    else:
                        mean_delay = model.distances[target_area][source_area] / delays["interarea_speed"]
                    bounds = (0.0, None) if excitatory or not intra else (None, 0.0)
                    found.append(
                        {
                            "target": index[f"{target_area}-{tp}"],
                            "source": index[f"{source_area}-{sp}"],
                            "n_syn": n_syn,
                            "w_mean": float(model.W[target_area][tp][source_area][sp]),
                            "w_sd": float(model.W_sd[target_area][tp][source_area][sp]),
                            "w_min": bounds[0],
                            "w_max": bounds[1],
                            "d_mean": float(mean_delay),
                            "d_sd": float(mean_delay * delays["delay_rel"]),
                            "d_min": dt_ms,
                        }
                    )
    return found


def replacement_inputs(model, simulated: list[str], all_areas: list[str], index: dict, rates: dict) -> list[dict]:
    """Poisson input in place of each non-simulated area's population (het_poisson_stat): per target,
    source area and population, the in-degree times that population's full-scale rate, with its
    weight and the inter-area delay (inputs of rate 0 left out)."""
    delays = model.params["delay_params"]
    found = []
    for target_area in simulated:
        for source_area in (a for a in all_areas if a not in simulated):
            delay = model.distances[target_area][source_area] / delays["interarea_speed"]
            for tp in model.structure[target_area]:
                for sp in model.structure[source_area]:
                    indegree = float(model.synapses[target_area][tp][source_area][sp]) / float(model.N[target_area][tp])
                    rate = indegree * float(rates[source_area][sp])
                    if rate > 0:
                        found.append(
                            {
                                "target": index[f"{target_area}-{tp}"],
                                "source_area": source_area,
                                "source_pop": sp,
                                "rate_total": rate,
                                "weight": float(model.W[target_area][tp][source_area][sp]),
                                "delay": float(delay),
                            }
                        )
    return found


def describe(params: dict, work: Path) -> dict:
    tree = working_copy(work)
    sys.path.insert(0, str(tree))
    started = time.perf_counter()
    from multiarea_model import MultiAreaModel
    from multiarea_model.default_params import complete_area_list

    all_areas = list(complete_area_list)
    simulated = params["areas_simulated"] or all_areas
    model = MultiAreaModel(model_spec({**params, "areas_simulated": simulated}, tree, all_areas), theory=True)
    derived_s = time.perf_counter() - started
    neuron = model.params["neuron_params"]
    pops = populations(model, simulated)
    index = {f"{p['area']}-{p['pop']}": i for i, p in enumerate(pops)}
    started = time.perf_counter()
    names, trajectories = model.theory.integrate_siegert()
    theory_s = time.perf_counter() - started
    description = {
        "source": {"model": "INM-6/multi-area-model", "version": "1.2.0", "label": model.label},
        "parameters": params,
        "dt_ms": params["dt_ms"],
        "areas": all_areas,
        "areas_simulated": simulated,
        "neuron": {
            "model": neuron["neuron_model"],
            "params": dict(neuron["single_neuron_dict"]),
            "V_m_init": {"mean": float(neuron["V0_mean"]), "sd": float(neuron["V0_sd"])},
        },
        "populations": pops,
        "projections": projections(model, simulated, index, params["dt_ms"]),
        "replacement_inputs": replacement_inputs(
            model, simulated, all_areas, index, json.loads((tree / RATES_FILE).read_text())
        ),
        "compensation": {
            "K_scaling": params["indegree_scale"],
            "weights": "x 1/sqrt(K_scaling), external input included (weight sd not rescaled)",
            "dc_drive_pA": "C_m/tau_m x (1 - sqrt(K_scaling)) x the mean input at full-scale rates (I_e)",
        },
        "theory": {
            "method": f"Theory.integrate_siegert, whole network, {model.theory.params['T']:g} ms",
            "rates_hz": {str(name): float(rate) for name, rate in zip(names, trajectories[:, -1], strict=True)},
        },
        "derived_s": round(derived_s, 2),
        "theory_s": round(theory_s, 2),
    }
    simulated_pops = [p for p in pops if p["simulated"]]
    description["totals"] = {
        "neurons": sum(p["n"] for p in simulated_pops),
        "synapses": sum(p["n_syn"] for p in description["projections"]),
        "populations": len(simulated_pops),
        "projections": len(description["projections"]),
    }
    return description


def main(argv: list[str]) -> int:
    params, out = json.loads(Path(argv[0]).read_text()), Path(argv[1])
    with tempfile.TemporaryDirectory(prefix="snnbench-mam-") as work:
        description = describe(params, Path(work))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".tmp")
    partial.write_text(json.dumps(description, separators=(",", ":")))
    partial.replace(out)
    totals = description["totals"]
    print(f"{out}: {totals['neurons']} neurons, {totals['synapses']} synapses, {totals['projections']} projections")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
