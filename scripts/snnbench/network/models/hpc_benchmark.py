"""NEST's hpc_benchmark: the balanced random network with spike-timing dependent plasticity that
beNNch and NEST's release benchmarks use for weak scaling (fixed in-degree, so the work per virtual
process stays constant as the network grows with the machine).

Facts from NEST's pynest/examples/hpc_benchmark.py and Albers et al. 2022, Front. Neuroinform.
16:837549 (beNNch). Units in the names; `derive` turns a size (neuron scale = the example's
`scale`, in-degree scale) into what a simulator needs.

In-degrees below the model's (indegree_scale < 1, for small machines) keep the mean input: every
weight is divided by the in-degree scale and the external rate multiplied by it, so K x J and
rate x J stay as in the full model (the input's variance grows by 1 / indegree_scale). The record
says so (model_results.indegree_compensation).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np

from snnbench.network.models.base import NetworkModel, Size, parameter_block

POPULATIONS = ("E", "I")
NEURONS_PER_SCALE = np.array([9000, 2250])  # at scale 1: 11 250 neurons
INDEGREE = np.array([9000, 2250])  # inputs per neuron from E and from I, whatever the scale
NEURON = {  # iaf_psc_alpha
    "C_m_pF": 250.0,
    "tau_m_ms": 10.0,
    "tau_syn_ms": 0.3258,
    "t_ref_ms": 0.5,
    "V_th_mV": 20.0,
    "V_reset_mV": 0.0,
    "E_L_mV": 0.0,
    "tau_minus_ms": 30.0,  # the STDP rule's depression time constant lives in the neuron
}
V0_MEAN_MV, V0_SD_MV = 5.7, 7.2
PSP_MV = 0.14  # peak PSP of an excitatory synapse
G = -5.0  # inhibitory weight relative to excitatory
DELAY_MS = 1.5
ETA = 1.685  # external rate relative to the threshold rate of the excitatory in-degree
STDP = {"alpha": 0.0513, "lambda": 0.1, "mu": 0.4, "tau_plus": 15.0}  # stdp_pl_synapse_hom
DT_MS = 0.1
# Every population connects to itself without autapses: one neuron has no input to draw.
MIN_NEURONS = 2
MAX_MEAN_RATE_HZ = 10.0  # the regime the sources give for the full in-degrees
# Asynchronous firing: the activity check's mean pairwise spike-count correlation (2 ms bins,
# snnbench.network.activity) at most this, in every population. Our bound, not a published one:
# measured here (NEST 3.10, 500 ms, in-degree scale 0.1) 0.04-0.15 for 1 125-2 250 neurons and
# 0.3-0.8 for 112-560 neurons, whose E in-degree reaches the number of E neurons (bursts).
MAX_CORRELATION = 0.2


def psc_per_psp(C_m_pF: float, tau_m_ms: float, tau_syn_ms: float) -> float:
    """Amplitude (pA) of an alpha current J·e/tau_s·t·exp(-t/tau_s) whose PSP peaks at 1 mV.

    Integrating the leaky membrane gives V(t) = J·e/(C·tau_s·b²)·(exp(-t/tau_m) - exp(-t/tau_s)·(1 + b·t))
    with b = 1/tau_s - 1/tau_m; its peak (V is unimodal) is found by golden-section search, in
    plain Python: every simulator's environment imports this module, and not all have scipy.
    """
    b = 1.0 / tau_syn_ms - 1.0 / tau_m_ms

    def psp_per_pA(t_ms: float) -> float:
        shape = math.exp(-t_ms / tau_m_ms) - math.exp(-t_ms / tau_syn_ms) * (1.0 + b * t_ms)
        return math.e / (C_m_pF * tau_syn_ms * b**2) * shape

    low, high = 0.0, 10 * tau_m_ms
    ratio = (math.sqrt(5) - 1) / 2
    while high - low > 1e-12:
        a, b_ = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (a, high) if psp_per_pA(a) < psp_per_pA(b_) else (low, b_)
    return 1.0 / psp_per_pA((low + high) / 2)


@dataclass(frozen=True)
class Network:
    num_neurons: np.ndarray  # E, I
    indegree: np.ndarray  # from E, from I
    weight_exc_pA: float
    weight_inh_pA: float
    external_rate_hz: float  # of each neuron's Poisson input (weight weight_exc_pA)
    indegree_compensation: float  # the factor every weight carries (1 / indegree_scale)

    @property
    def total_synapses(self) -> int:
        return int(self.num_neurons.sum() * self.indegree.sum())


def derive(neuron_scale: float, indegree_scale: float) -> Network:
    num_neurons = np.maximum(1, np.round(NEURONS_PER_SCALE * neuron_scale)).astype(int)
    indegree = np.maximum(1, np.round(INDEGREE * indegree_scale)).astype(int)
    weight_full_pA = PSP_MV * psc_per_psp(NEURON["C_m_pF"], NEURON["tau_m_ms"], NEURON["tau_syn_ms"])
    # The rate that brings a neuron to threshold through its excitatory in-degree alone
    # (per input, spikes/ms), as NEST's example defines it.
    threshold_rate = (NEURON["V_th_mV"] * NEURON["C_m_pF"]) / (
        weight_full_pA * INDEGREE[0] * math.e * NEURON["tau_m_ms"] * NEURON["tau_syn_ms"]
    )
    compensation = 1.0 / indegree_scale
    return Network(
        num_neurons=num_neurons,
        indegree=indegree,
        weight_exc_pA=weight_full_pA * compensation,
        weight_inh_pA=G * weight_full_pA * compensation,
        external_rate_hz=1000.0 * ETA * threshold_rate * INDEGREE[0] * indegree_scale,
        indegree_compensation=compensation,
    )


def network(params: dict) -> Network:
    """What every simulator builds for a point's parameters: derive(), then the deliberate change of
    `perturbation` where the experiment asks for one (validation's power, make bench-validation): every
    inhibitory weight times `inhibition_scale` (the excitatory ones and the drive stay)."""
    net = derive(params["neuron_scale"], params["indegree_scale"])
    scale = (params.get("perturbation") or {}).get("inhibition_scale", 1.0)
    return replace(net, weight_inh_pA=net.weight_inh_pA * scale)


# The E->E weight distribution in the record: counts of w / w_initial in these bins (values
# outside land in the end bins), the same for every rank and simulator so that they add up.
WEIGHT_BINS_RELATIVE = np.linspace(0.0, 2.0, 401)
MOVED_RELATIVE = 1e-9  # a weight that differs from its initial value by more has moved
# The weights summarised: the incoming E->E synapses of the first WEIGHT_SAMPLE_TARGETS E neurons
# (whatever the scale), the same on every simulator. PyNEST's read of synapse weights costs
# ~2.6 kB and ~7 us per synapse (measured, NEST 3.10: 1 M synapses, +2.6 GB, 6.8 s), so reading
# all of them would end large runs for lack of memory.
WEIGHT_SAMPLE_TARGETS = 100


def weight_summary(weights_pA: np.ndarray, initial_pA: float) -> dict:
    """What one rank reports of its E->E weights after the run; `results` merges the ranks."""
    values = np.asarray(weights_pA, dtype=float)
    relative = np.clip(values / initial_pA, WEIGHT_BINS_RELATIVE[0], WEIGHT_BINS_RELATIVE[-1])
    counts, _ = np.histogram(relative, bins=WEIGHT_BINS_RELATIVE)
    return {
        "count": int(values.size),
        "sum": float(values.sum()),
        "sum_sq": float((values**2).sum()),
        "moved": int((np.abs(values - initial_pA) > MOVED_RELATIVE * initial_pA).sum()),
        "histogram": counts.tolist(),
    }


def merge_weights(parts: list[dict], initial_pA: float) -> dict:
    """The ranks' weight summaries as one: count, mean, sd, the fraction that moved and the
    histogram of w / w_initial (its bin edges beside it)."""
    count = sum(p["count"] for p in parts)
    mean = sum(p["sum"] for p in parts) / count
    variance = max(0.0, sum(p["sum_sq"] for p in parts) / count - mean**2)
    merged = {"count": count, "mean": mean, "sd": math.sqrt(variance), "initial": initial_pA}
    if all("moved" in p for p in parts):
        merged["moved_fraction"] = sum(p["moved"] for p in parts) / count
    if all("histogram" in p for p in parts):
        merged["histogram_relative"] = {
            "edges": WEIGHT_BINS_RELATIVE.round(6).tolist(),
            "counts": np.sum([p["histogram"] for p in parts], axis=0).astype(int).tolist(),
        }
    return merged


PARAMETERS = parameter_block(
    "hpc_benchmark parameters (NEST's pynest/examples/hpc_benchmark.py).",
    neuron_scale="The example's `scale` (strong scaling): 1 = 11 250 neurons (9 000 E, 2 250 I).",
    indegree_scale="Fraction of the 9 000 + 2 250 inputs per neuron; weights x 1/indegree_scale keep the mean.",
    inputs={"poisson": "one Poisson input per neuron"},
    t_presim_ms={"description": "Presimulation, ms (beNNch: 500)."},
    perturbation={
        "description": "A deliberate change of the model, to measure what validation detects (its power; make "
        "bench-validation). Unset: the model as NEST's example has it.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "inhibition_scale": {
                "description": "Every inhibitory weight times this (the relative inhibition g).",
                "type": "number",
                "exclusiveMinimum": 0,
            },
        },
    },
)

# Memory per neuron and per synapse: PD14's measured figures (snnbench.network.models.pd14),
# twice for every synapse as a conservative allowance for the plastic ones; not measured for this model.
INTERPRETER_MB, NEURON_MB, SYNAPSE_MB, WRAPPER_MB = 155, 38e-3, 2 * 38e-6, 60


class HpcBenchmark(NetworkModel):
    name = "hpc_benchmark"
    title = "hpc_benchmark (NEST's weak-scaling model)"
    populations = POPULATIONS
    dt_ms = DT_MS
    parameter_schema = PARAMETERS
    figures = {"weights": ["ee_weight_distribution"]}  # snnbench.figures.plasticity
    weight_bins_relative = WEIGHT_BINS_RELATIVE  # of the records' and the table's weight histograms

    def size(self, params: dict) -> Size:
        net = derive(params["neuron_scale"], params["indegree_scale"])
        return Size(num_neurons=net.num_neurons, total_synapses=net.total_synapses)

    def check(self, where: str, experiment: dict, params: list[dict]) -> list[str]:
        """Populations of fewer than two neurons: every population draws inputs from itself without
        autapses, which one neuron cannot (NEST's fixed_indegree searches for ever; derive() would
        round a population of none up to one)."""
        smallest = min(p["neuron_scale"] for p in params)
        with np.errstate(over="ignore"):  # in floats: an integer scale past int64 overflows an int array
            sizes = np.round(NEURONS_PER_SCALE * float(smallest))
        if sizes.min() >= MIN_NEURONS:
            return []
        key = "neuron_scale" if "neuron_scale" in experiment[self.name] else "neuron_scale_per_vp"
        return [
            f"{where}: hpc_benchmark.{key} gives populations of fewer than {MIN_NEURONS} neurons (neuron scale "
            f"{smallest:g}: {dict(zip(POPULATIONS, sizes.astype(int).tolist(), strict=True))}), which cannot draw "
            f"their inputs from themselves without autapses; the smallest neuron scale allowed is "
            f"{MIN_NEURONS / NEURONS_PER_SCALE.min():.2e}"
        ]

    def results(self, params: dict, rank_results: list[dict]) -> dict:
        """The E->E weights after the run over all ranks (mean, sd) beside their initial value."""
        parts = [r["ee_weights"] for r in rank_results if "ee_weights" in r]
        if not parts or not sum(p["count"] for p in parts):
            return {}
        net = derive(params["neuron_scale"], params["indegree_scale"])
        targets = min(WEIGHT_SAMPLE_TARGETS, int(net.num_neurons[0]))
        results = {
            "ee_weights_pA": {
                **merge_weights(parts, net.weight_exc_pA),
                "sample": f"incoming E->E synapses of the first {targets} E neurons",
            },
            "indegree_compensation": (
                f"weights x {net.indegree_compensation:g}, external rate x {params['indegree_scale']:g}"
            ),
        }
        # NEST's synapse models (the `_hpc` variants where they fit), the same on every rank.
        synapse_models = next((r["nest_synapse_models"] for r in rank_results if "nest_synapse_models" in r), None)
        if synapse_models:
            results["nest_synapse_models"] = synapse_models
        return results

    def activity_rates(self, params: dict, results: dict) -> dict | None:
        """The documented regime's upper end (MAX_MEAN_RATE_HZ), at the model's own in-degrees only:
        down-scaled ones fire faster, and the config's bounds judge them."""
        if params["indegree_scale"] != 1:
            return None
        return {
            "rates_hz": dict.fromkeys(POPULATIONS, MAX_MEAN_RATE_HZ),
            "source": "hpc_benchmark's regime at its own in-degrees (mean rate below 10 spikes/s)",
            "upper_only": True,
        }

    def activity_problems(self, params: dict, populations: list[dict], results: dict) -> list[str]:
        problems = []
        spikes = sum(row["spikes"] for row in populations)
        neurons = sum(row["neurons"] for row in populations)
        mean_rate = spikes / neurons / (params["t_sim_ms"] * 1e-3) if neurons else 0.0
        # The published regime holds for the model's own in-degrees; down-scaled ones (with their
        # larger weights) fire faster (measured here: 16-40 spikes/s at indegree_scale 0.02-0.3),
        # so only the config's activity bounds judge them.
        if params["indegree_scale"] == 1 and mean_rate >= MAX_MEAN_RATE_HZ:
            problems.append(f"mean rate {mean_rate:.3g} spikes/s >= {MAX_MEAN_RATE_HZ} (hpc_benchmark's regime)")
        for row in populations:
            if (row.get("correlation") or 0.0) > MAX_CORRELATION:
                correlation = f"spike-count correlation {row['correlation']:.2f} > {MAX_CORRELATION}"
                problems.append(f"{row['population']} synchronous: {correlation}")
        weights = results.get("ee_weights_pA")
        if weights and np.isclose(weights["mean"], weights["initial"], rtol=1e-9) and weights["sd"] == 0:
            problems.append("E->E weights did not move: plasticity did not act")
        return problems

    def table_columns(self, results: dict) -> dict:
        """The E->E weights after the run: mean, sd, initial (pA), the fraction that moved, and the
        histogram of w / w_initial (WEIGHT_BINS_RELATIVE) from its first non-empty bin, as JSON."""
        weights = results.get("ee_weights_pA")
        if not weights:
            return {}
        columns = {
            "ee_weight_mean_pA": weights["mean"],
            "ee_weight_sd_pA": weights["sd"],
            "ee_weight_initial_pA": weights["initial"],
            "ee_weights_moved_fraction": weights.get("moved_fraction"),
            "nest_synapse_models": " ".join(results.get("nest_synapse_models", [])) or None,
        }
        if "histogram_relative" in weights:
            counts = np.asarray(weights["histogram_relative"]["counts"])
            used = np.flatnonzero(counts)
            first, last = (used[0], used[-1]) if used.size else (0, -1)
            histogram = {"first": int(first), "counts": counts[first : last + 1].tolist()}
            columns["ee_weight_histogram"] = json.dumps(histogram)
        return columns

    def estimate_mem_mb(self, spec: dict) -> int:
        model, res = spec["model"], spec["resources"]
        net = derive(model["neuron_scale"], model["indegree_scale"])
        network = (net.num_neurons.sum() * NEURON_MB + net.total_synapses * SYNAPSE_MB) / res["nodes"]
        return math.ceil(1.1 * (res["ranks_per_node"] * INTERPRETER_MB + network)) + WRAPPER_MB
