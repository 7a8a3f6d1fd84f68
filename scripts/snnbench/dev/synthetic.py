"""Synthetic results in the real formats (record.json, validation.json, stats.npz, benchmark .tsv)
for tests of the tables and figures and for the benchmark of collect + analyze. Nothing here is a
measurement: times follow a simple model (construction and simulation shrink with the number of
virtual processes plus a serial part) with noise, rates scatter around the reference rates.

Points can be made to fail (status failed), to be implausible (a silent population) or to miss
the validation tolerance (spike statistics far from the reference run).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np

from snnbench import planning
from snnbench.hashing import canonical_hash
from snnbench.network import references, validation
from snnbench.network.models import pd14
from snnbench.network.phases import PHASES
from snnbench.paths import point_benchmark
from snnbench.records import record

# Relative cost of each phase at one VP (seconds per unit of neuron scale x in-degree scale) and
# its serial share, for plausible-looking curves only.
PHASE_COST = {"setup": (0.5, 1.0), "create": (2.0, 0.3), "connect": (60.0, 0.05), "prepare": (5.0, 0.1)}
SIM_COST_PER_MODEL_S = 40.0  # seconds of simulate per second of model time at full scale on one VP


def experiment(name="synthetic", simulators=("nest",), threads=(1, 2, 4, 8), seeds=(1, 2, 3), scaling="strong"):
    exp = {
        "name": name,
        "model": "pd14",
        "simulators": list(simulators),
        "scaling": scaling,
        "resources": {"nodes": [1], "ranks_per_node": [1], "threads_per_rank": list(threads)},
        "pd14": {"indegree_scale": 0.1, "t_presim_ms": 100.0, "t_sim_ms": 1000.0, "input": "poisson"},
        "seeds": list(seeds),
        "time_limit_min": 60,
    }
    exp["pd14"]["record_spikes"] = True
    if scaling == "strong":
        exp["pd14"]["neuron_scale"] = 0.1
    else:
        exp["pd14"]["neuron_scale_per_vp"] = 0.05
    return exp


def _phases(spec: dict, rng, slow: float) -> dict:
    model, vps = spec["model"], spec["resources"]["virtual_processes"]
    size = model["neuron_scale"] * model["indegree_scale"]
    phases = {}
    for phase, (cost, serial) in PHASE_COST.items():
        phases[phase] = cost * size * (serial + (1 - serial) / vps) * rng.lognormal(0, 0.05) * slow
    per_model_s = SIM_COST_PER_MODEL_S * size * (0.05 + 0.95 / vps) * rng.lognormal(0, 0.05) * slow
    phases["presimulate"] = per_model_s * model["t_presim_ms"] * 1e-3
    phases["simulate"] = per_model_s * model["t_sim_ms"] * 1e-3
    phases["total"] = sum(phases[p] for p in PHASES)
    return phases


SYNTHETIC_PROVENANCE = {
    "started_utc": "2026-01-01T00:00:00+00:00",
    "workflow": {"git_commit": "0" * 40, "git_dirty": False},
    "benchmark_hash": "synthetic",
    "python": {"version": "3.11", "executable": "python"},
    "host": {
        "hostname": "synthetic",
        "platform": "synthetic",
        "cpu_model": "synthetic",
        "logical_cpus": 2,
        "usable_cpus": 2,
        "load_average_1_5_15": [0.0, 0.0, 0.0],
    },
    "environment": {},
    "slurm": None,
}


def _populations(net, model: dict, rng, silent: str | None) -> list[dict]:
    reference = pd14.reference_rates(0.1, 0.1, "poisson")[0]
    populations = []
    for i, name in enumerate(pd14.POPULATIONS):
        rate = 0.0 if name == silent else reference[name] * rng.lognormal(0, 0.05)
        spikes = int(rate * net.num_neurons[i] * model["t_sim_ms"] * 1e-3)
        populations.append(
            {
                "population": name,
                "neurons": int(net.num_neurons[i]),
                "spikes": spikes,
                "rate_hz": spikes / (net.num_neurons[i] * model["t_sim_ms"] * 1e-3),
                "cv_isi": float(rng.uniform(0.7, 0.9)) if spikes else None,
                "cv_neurons": int(net.num_neurons[i] // 2) if spikes else 0,
            }
        )
    return populations


def make_record(spec: dict, rng, status="ok", silent: str | None = None, slow: float = 1.0) -> dict:
    """A record valid against the record schema. `silent` names a population that does not fire."""
    model = spec["model"]
    net = pd14.derive(model["neuron_scale"], model["indegree_scale"], model["input"])
    prov = {
        "spec_hash": canonical_hash(spec),
        **copy.deepcopy(SYNTHETIC_PROVENANCE),
        "packages": {"numpy": np.__version__},
    }
    rec = {"schema_version": record.SCHEMA_VERSION, "point": spec, "status": status, "provenance": prov}
    if status != "ok":
        rec.update(failure={"reason": "synthetic failure: killed by SIGKILL"}, wall_time_s=1.0)
        return rec
    phases = _phases(spec, rng, slow)
    ranks = spec["resources"]["ranks"]
    first_ids = (1 + np.concatenate([[0], np.cumsum(net.num_neurons)[:-1]])).tolist()
    populations = _populations(net, model, rng, silent)
    memory_mb = 300.0 + 50 * net.total_synapses / 1e6
    rank = {
        "rank": 0,
        "num_ranks": ranks,
        "threads": spec["resources"]["threads_per_rank"],
        "host": "synthetic",
        "phases_s": {p: phases[p] for p in PHASES},
        "peak_rss_mb": memory_mb / ranks,
        "local_synapses": net.total_synapses // ranks,
        "population_first_ids": first_ids,
    }
    rec.update(
        failure=None,
        wall_time_s=phases["total"] + 2.0,
        phases_s=phases,
        real_time_factor=phases["simulate"] / (model["t_sim_ms"] * 1e-3),
        simulator_timers_s={"simulate": {"time_simulate": phases["simulate"] * 0.99}},
        memory={"peak_rss_mb_sum": memory_mb, "peak_rss_mb_max_rank": memory_mb / ranks},
        network={
            "num_neurons": net.total_neurons,
            "num_synapses": net.total_synapses,
            "expected_synapses": net.total_synapses,
        },
        populations=populations,
        simulator={"name": spec["simulator"], "version": "synthetic"},
        ranks=[dict(rank, rank=r) for r in range(ranks)],
    )
    return rec


def make_stats(rng, shift: float = 0.0, neurons: int = 50) -> dict:
    """Samples like those of validation.spike_statistics; `shift` moves every distribution."""
    stats = {}
    for name in pd14.POPULATIONS:
        rates = rng.gamma(2.0, 2.0, neurons) + shift * 10
        cvs = rng.normal(0.8 + shift, 0.1, neurons)
        pairs = rng.normal(0.01 + shift, 0.02, neurons * (neurons - 1) // 2)
        stats[name] = {
            "rate": rates,
            "cv_isi": cvs,
            "correlation": pairs,
            "rate_neurons": np.array(neurons),
            "cv_isi_neurons": np.array(neurons),
            "correlation_neurons": np.array(neurons),
        }
    return stats


def write_experiment(
    root: Path,
    exp: dict,
    failed=(),
    implausible=(),
    off_reference=(),
    with_stats=True,
    seed=0,
    slow: float = 1.0,
    distinct_validations: int | None = None,
) -> dict:
    """Write every point of `exp` under `root` (records, validation results, stats, benchmarks).
    failed / implausible / off_reference: point paths (as in the spec) to spoil. with_stats:
    True (every point), False, or the paths of the points that get a stats.npz.
    distinct_validations: compute this many validation results and reuse them in turn (for
    large synthetic sets). Returns the lists of paths collect takes: records, benchmarks,
    validations, stats."""
    rng = np.random.default_rng(seed)
    specs = planning.expand_points(exp)
    paths = {"records": [], "benchmarks": [], "validations": [], "stats": []}
    reference_stats = make_stats(np.random.default_rng(10_000 + seed))
    reference_of = references.reference_index(specs, {exp["name"]: exp["simulators"]})
    pool: list = []
    for spec in specs:
        point = root / spec["path"]
        point.mkdir(parents=True, exist_ok=True)
        status = "failed" if spec["path"] in failed else "ok"
        silent = "L6E" if spec["path"] in implausible else None
        rec = make_record(spec, rng, status, silent, slow)
        (point / "spec.json").write_text(json.dumps(spec))
        (point / "record.json").write_text(json.dumps(rec))
        bench = root / point_benchmark(spec["path"])
        bench.parent.mkdir(parents=True, exist_ok=True)
        bench.write_text(f"s\tmax_rss\n{rec['wall_time_s'] + 1.0:.3f}\t{400.0:.1f}\n")
        save_stats = with_stats is True or bool(with_stats and spec["path"] in with_stats)
        reuse = bool(distinct_validations and len(pool) >= distinct_validations and spec["path"] not in off_reference)
        if status == "ok":
            shift = 1.0 if spec["path"] in off_reference else 0.0
            stats = make_stats(rng, shift=shift) if save_stats or not reuse else {}
            if reuse:
                rows = pool[len(paths["records"]) % distinct_validations]
            else:
                rows = validation.compare(stats, reference_stats, [], min_samples=10)
                pool.append(rows)
            result = {"point": spec["path"], "reference": reference_of[spec["path"]], "checked": True, "rows": rows}
            meta = {"point": spec["path"], "settings": {}, "reason": None}
        else:
            stats, meta = {}, {"point": spec["path"], "settings": {}, "reason": "point failed"}
            result = {"point": spec["path"], "reference": None, "checked": False, "reason": "point failed", "rows": []}
        (point / "validation.json").write_text(json.dumps(result))
        if save_stats:
            validation.save(stats, meta, point / "stats.npz")
            paths["stats"].append(point / "stats.npz")
        paths["records"].append(point / "record.json")
        paths["benchmarks"].append(bench)
        paths["validations"].append(point / "validation.json")
    return paths
