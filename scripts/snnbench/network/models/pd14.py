"""Parameters of the Potjans & Diesmann (2014) cortical microcircuit (PD14).

Plain values with their units in the names, and one function (`derive`) that turns a model size
(neuron scale, in-degree scale) and an input type into everything a simulator needs. Every
simulator backend reads this module, so the networks they build are the same network.

Sources: Potjans & Diesmann 2014, Cereb. Cortex 24:785 (tables 4 and 5); the INM-6 model
description (microcircuit-PD14-model) for the optimized initial membrane potentials, the
redrawing of weights and delays and the DC compensation of down-scaled in-degrees
(van Albada, Helias & Diesmann 2015, PLoS Comput. Biol. 11:e1004490).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from snnbench.network.models import pd14_exported as exported
from snnbench.network.models.base import NetworkModel, Size, parameter_block

POPULATIONS = ("L23E", "L23I", "L4E", "L4I", "L5E", "L5I", "L6E", "L6I")
EXCITATORY = tuple(name.endswith("E") for name in POPULATIONS)

FULL_NUM_NEURONS = np.array([20683, 5834, 21915, 5479, 4850, 1065, 14395, 2948])

# Connection probabilities, rows = target population, columns = source population (table 5).
CONN_PROBS = np.array(
    [
        [0.1009, 0.1689, 0.0437, 0.0818, 0.0323, 0.0, 0.0076, 0.0],
        [0.1346, 0.1371, 0.0316, 0.0515, 0.0755, 0.0, 0.0042, 0.0],
        [0.0077, 0.0059, 0.0497, 0.135, 0.0067, 0.0003, 0.0453, 0.0],
        [0.0691, 0.0029, 0.0794, 0.1597, 0.0033, 0.0, 0.1057, 0.0],
        [0.1004, 0.0622, 0.0505, 0.0057, 0.0831, 0.3726, 0.0204, 0.0],
        [0.0548, 0.0269, 0.0257, 0.0022, 0.06, 0.3158, 0.0086, 0.0],
        [0.0156, 0.0066, 0.0211, 0.0166, 0.0572, 0.0197, 0.0396, 0.2252],
        [0.0364, 0.001, 0.0034, 0.0005, 0.0277, 0.008, 0.0658, 0.1443],
    ]
)

# External (background) in-degrees at full scale and the rate of each external source.
K_EXT = np.array([1600, 1500, 2100, 1900, 2000, 1900, 2900, 2100])
BG_RATE_HZ = 8.0

# Neuron model: leaky integrate-and-fire with exponential post-synaptic currents (iaf_psc_exp).
NEURON = {
    "C_m_pF": 250.0,
    "tau_m_ms": 10.0,
    "tau_syn_ms": 0.5,
    "t_ref_ms": 2.0,
    "E_L_mV": -65.0,
    "V_th_mV": -50.0,
    "V_reset_mV": -65.0,
}
# Optimized initial membrane potentials per population (mean and sd, mV): they shorten the
# start-up transient (INM-6 model description).
V0_MEAN_MV = np.array([-68.28, -63.16, -63.33, -63.45, -63.11, -61.66, -66.72, -61.43])
V0_SD_MV = np.array([5.36, 4.57, 4.74, 4.94, 4.94, 4.55, 5.46, 4.48])

PSP_EXC_MV = 0.15  # peak excitatory PSP; 87.81 pA as a current
G_INH = -4.0  # relative strength of inhibition
L4E_TO_L23E_FACTOR = 2.0  # the one doubled projection (table 5 footnote)
WEIGHT_REL_SD = 0.1
DELAY_EXC_MS = 1.5
DELAY_INH_MS = 0.75
DELAY_REL_SD = 0.5
DELAY_EXT_MS = 1.5
DT_MS = 0.1

# Mean rates of the full-scale network (spikes/s), used to compensate down-scaled in-degrees.
FULL_MEAN_RATES_HZ = np.array([0.903, 2.965, 4.414, 5.876, 7.569, 8.633, 1.105, 7.829])

# Published population rates (spikes/s), keyed by (neuron scale, in-degree scale, input).
# Full scale: INM-6 microcircuit-PD14-model, NEST 3. N = K = 0.1: NEST's PD14 example reference
# data (Poisson input, 1 s, seed 55).
REFERENCE_RATES_HZ = {
    (1.0, 1.0, "poisson"): (FULL_MEAN_RATES_HZ, "INM-6 microcircuit-PD14-model, full scale, NEST 3"),
    (1.0, 1.0, "dc"): (FULL_MEAN_RATES_HZ, "INM-6 microcircuit-PD14-model, full scale, NEST 3"),
    (0.1, 0.1, "poisson"): (
        np.array([0.402, 2.017, 3.880, 4.958, 6.575, 7.726, 0.831, 6.986]),
        "NEST PD14 example reference data, N = K = 0.1, Poisson, 1 s",
    ),
}


def psc_per_psp(C_m_pF: float, tau_m_ms: float, tau_syn_ms: float) -> float:
    """Current amplitude (pA) whose exponential PSC gives a PSP peak of 1 mV.

    The PSP of an exponential current J·exp(-t/tau_s) into a leaky membrane is
    J/C · tau_m·tau_s/(tau_m - tau_s) · (exp(-t/tau_m) - exp(-t/tau_s)); its peak lies at
    t* = tau_m·tau_s/(tau_m - tau_s) · ln(tau_m/tau_s).
    """
    tau_ratio = tau_m_ms * tau_syn_ms / (tau_m_ms - tau_syn_ms)
    t_peak = tau_ratio * np.log(tau_m_ms / tau_syn_ms)
    psp_per_pA = tau_ratio / C_m_pF * (np.exp(-t_peak / tau_m_ms) - np.exp(-t_peak / tau_syn_ms))
    return 1.0 / psp_per_pA


def synapse_counts(conn_probs: np.ndarray, n_target: np.ndarray, n_source: np.ndarray) -> np.ndarray:
    """Expected synapse count per projection for connection probability p under the
    'fixed total number, drawn with replacement' rule: log(1 - p) / log(1 - 1/(N_pre·N_post))."""
    pairs = np.outer(n_target, n_source).astype(float)
    return np.log(1.0 - conn_probs) / np.log1p(-1.0 / pairs)


@dataclass(frozen=True)
class Network:
    """Everything a simulator needs to build PD14 at one size. Matrices: [target, source]."""

    neuron_scale: float
    indegree_scale: float
    input: str  # "poisson" or "dc"
    num_neurons: np.ndarray
    num_synapses: np.ndarray
    weight_mean_pA: np.ndarray
    weight_sd_pA: np.ndarray
    delay_mean_ms: np.ndarray
    delay_sd_ms: np.ndarray
    ext_indegree: np.ndarray
    weight_ext_pA: float
    poisson_rate_hz: np.ndarray  # rate of one Poisson generator per population (0 with DC input)
    dc_amp_pA: np.ndarray  # constant input current per population

    @property
    def total_neurons(self) -> int:
        return int(self.num_neurons.sum())

    @property
    def total_synapses(self) -> int:
        return int(self.num_synapses.sum())


def external_current_pA() -> np.ndarray:
    """Mean external input of the full model per population, as a current (pA): rate * K_ext * J * tau_syn.
    (Multiplied in this order: another order changes the DC in its last bit, and NEST's spikes with it.)"""
    weight_ext_full_pA = PSP_EXC_MV * psc_per_psp(NEURON["C_m_pF"], NEURON["tau_m_ms"], NEURON["tau_syn_ms"])
    return BG_RATE_HZ * K_EXT * weight_ext_full_pA * (NEURON["tau_syn_ms"] * 1e-3)


def external_dc_pA(indegree_scale: float, input: str) -> np.ndarray:
    """The part of derive()'s DC current that stands for the background input: all of it with input dc, the
    (1 - sqrt(K)) that down-scaled in-degrees move from the Poisson input into the DC with input poisson."""
    return external_current_pA() * (1.0 if input == "dc" else 1.0 - np.sqrt(indegree_scale))


def derive(neuron_scale: float, indegree_scale: float, input: str = "poisson") -> Network:
    """Derive network sizes, weights and drive for one model size.

    Down-scaled in-degrees (K < 1) get weights scaled by 1/sqrt(K) and a DC current that restores
    the mean input of the full-scale network (van Albada et al. 2015), so rates stay close to
    those of the full model.
    """
    if input not in ("poisson", "dc"):
        raise ValueError(f"input must be 'poisson' or 'dc', not {input!r}")
    num_neurons = np.round(FULL_NUM_NEURONS * neuron_scale).astype(int)
    full_synapses = synapse_counts(CONN_PROBS, FULL_NUM_NEURONS, FULL_NUM_NEURONS)
    num_synapses = np.round(full_synapses * neuron_scale * indegree_scale).astype(int)
    ext_indegree = np.round(K_EXT * indegree_scale).astype(int)

    pA_per_mV = psc_per_psp(NEURON["C_m_pF"], NEURON["tau_m_ms"], NEURON["tau_syn_ms"])
    psp_mV = np.tile(np.where(EXCITATORY, PSP_EXC_MV, PSP_EXC_MV * G_INH), (len(POPULATIONS), 1))
    psp_mV[0, 2] *= L4E_TO_L23E_FACTOR
    weight_full_pA = psp_mV * pA_per_mV
    weight_ext_full_pA = PSP_EXC_MV * pA_per_mV
    tau_syn_s = NEURON["tau_syn_ms"] * 1e-3

    ext_current_pA = external_current_pA()
    dc_amp = np.zeros(len(POPULATIONS)) if input == "poisson" else ext_current_pA.astype(float)

    weight_pA, weight_ext_pA = weight_full_pA, weight_ext_full_pA
    if indegree_scale != 1.0:
        sqrt_k = np.sqrt(indegree_scale)
        weight_pA = weight_full_pA / sqrt_k
        weight_ext_pA = weight_ext_full_pA / sqrt_k
        full_indegree = full_synapses / FULL_NUM_NEURONS[:, None]
        rec_current_pA = (weight_full_pA * full_indegree * FULL_MEAN_RATES_HZ).sum(axis=1) * tau_syn_s
        dc_amp = dc_amp + (1.0 - sqrt_k) * rec_current_pA
        if input == "poisson":
            dc_amp = dc_amp + (1.0 - sqrt_k) * ext_current_pA

    delay_mean = np.tile(np.where(EXCITATORY, DELAY_EXC_MS, DELAY_INH_MS), (len(POPULATIONS), 1))
    return Network(
        neuron_scale=neuron_scale,
        indegree_scale=indegree_scale,
        input=input,
        num_neurons=num_neurons,
        num_synapses=num_synapses,
        weight_mean_pA=weight_pA,
        weight_sd_pA=np.abs(weight_pA) * WEIGHT_REL_SD,
        delay_mean_ms=delay_mean,
        delay_sd_ms=delay_mean * DELAY_REL_SD,
        ext_indegree=ext_indegree,
        weight_ext_pA=float(weight_ext_pA),
        poisson_rate_hz=(BG_RATE_HZ * ext_indegree if input == "poisson" else 0 * ext_indegree).astype(float),
        dc_amp_pA=dc_amp,
    )


def reference_rates(neuron_scale: float, indegree_scale: float, input: str) -> tuple[dict, str] | None:
    """Published population rates for this model size, or None where none exist."""
    for (n, k, inp), (rates, source) in REFERENCE_RATES_HZ.items():
        if np.isclose(n, neuron_scale) and np.isclose(k, indegree_scale) and inp == input:
            return dict(zip(POPULATIONS, rates.tolist(), strict=True)), source
    return None


# The memory estimate, fitted to the peak resident memory (VmHWM) of NEST 3.10's ranks, measured
# through the workflow on a 2-core machine (2026-11-23):
#   N0.02 K0.1 (1 544 neurons, 597 761 synapses):      1 rank 234 MB;  2 ranks 96 + 96 MB
#   N0.1  K0.1 (7 717 neurons, 2 988 807 synapses):    1 rank 561 MB;  2 ranks 252 + 251 MB
#   N1    K1   (77 169 neurons, 298 880 970 synapses): 2 ranks 7 153 + 7 153 MB (make bench-full-scale)
# A rank's interpreter with NEST imported (VmRSS after setup): 152 MB with the PyPI wheel (points of one
# rank run in .venv), 53 MB with NEST built with MPI (.venv-nest-mpi). The rest grows with the model:
# ~38 kB per neuron and ~38 B per synapse (a fit to N0.1 K0.1 and full scale; it gives N0.02 K0.1 within 5 %).
INTERPRETER_MB = {"one rank": 155, "mpi": 55}
NEURON_MB = 38e-3
SYNAPSE_MB = 38e-6
MEMORY_HEADROOM = 1.1  # the estimate lands 8-13 % above the measured peaks above (goal: 0-25 %)
# The parent beside the ranks (snnbench.network.execute: Python, numpy, jsonschema; the record's
# memory.wrapper_peak_rss_mb, ~55-60 MB measured), once per job on the first node: SLURM limits the job's
# processes together, and a tiny job measured 250 MB in all against 192 MB for its ranks.
WRAPPER_MB = 60


def network(params: dict) -> Network:
    """What every simulator builds for a point's parameters: derive(), then the deliberate change of
    `perturbation` where the experiment asks for one (validation's power, make bench-validation): all
    recurrent weights times `weight_scale`, every recurrent delay `delay_steps` steps longer, the recurrent
    in-degrees of one population times a factor (`population_indegree`), the background rate times
    `background_rate_scale` (the Poisson rates and the DC current that stands for background input)."""
    net = derive(params["neuron_scale"], params["indegree_scale"], params["input"])
    change = params.get("perturbation") or {}
    scale, steps = change.get("weight_scale", 1.0), change.get("delay_steps", 0)
    background = change.get("background_rate_scale", 1.0)
    extra_dc = (background - 1.0) * external_dc_pA(params["indegree_scale"], params["input"])
    synapses = net.num_synapses
    if "population_indegree" in change:
        target = POPULATIONS.index(change["population_indegree"]["population"])
        synapses = synapses.copy()
        synapses[target] = np.round(synapses[target] * change["population_indegree"]["scale"]).astype(int)
    return replace(
        net,
        num_synapses=synapses,
        weight_mean_pA=net.weight_mean_pA * scale,
        weight_sd_pA=net.weight_sd_pA * scale,
        delay_mean_ms=net.delay_mean_ms + steps * DT_MS,
        poisson_rate_hz=net.poisson_rate_hz * background,
        dc_amp_pA=net.dc_amp_pA + extra_dc,
    )


def estimate_mem_mb(spec: dict) -> int:
    """Memory to request per node (SLURM's --mem) for a point: each rank's interpreter plus the
    node's share of the network (neurons and synapses spread evenly over the nodes), with 10 %
    headroom, and the wrapper process beside the ranks (on the first node; counted on every node,
    which keeps the request the same for each)."""
    model, res = spec["model"], spec["resources"]
    net = derive(model["neuron_scale"], model["indegree_scale"], model["input"])
    interpreter = INTERPRETER_MB["mpi" if res["ranks"] > 1 else "one rank"]
    network = (net.total_neurons * NEURON_MB + net.total_synapses * SYNAPSE_MB) / res["nodes"]
    return math.ceil(MEMORY_HEADROOM * (res["ranks_per_node"] * interpreter + network)) + WRAPPER_MB


PARAMETERS = parameter_block(
    "PD14 model parameters.",
    neuron_scale=(
        "Neurons relative to the 77 169 of the full model (strong scaling): 0.1 = 10 %. Values above 1 upscale "
        "the model (more neurons with the same in-degrees, so more synapses; what weak scaling reaches on many "
        "VPs): rates stay those of the full model. Every population needs at least one neuron "
        "(neuron_scale >= 9.39e-4)."
    ),
    indegree_scale="Fraction of the full in-degrees; weights and DC input compensate below 1.",
    inputs={"poisson": "one Poisson generator per population", "dc": "the equivalent current"},
    network_seed={
        "description": "Set: every simulator reads one network, drawn and exported by NEST from this seed "
        "(rule describe_network: every neuron's initial potential, every synapse's source, target, weight and "
        "delay); the point's seed then seeds only the Poisson input. Unset: each simulator draws the network "
        "from the point's seed.",
        # NEST's range for an RNG seed (the exporter seeds NEST with it).
        "type": "integer",
        "minimum": 1,
        "maximum": 2**32 - 2,
    },
    perturbation={
        "description": "A deliberate change of the model, to measure what validation detects (its power; make "
        "bench-validation). Unset: the model as published. Not with network_seed (the exported network is NEST's).",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "weight_scale": {
                "description": "All recurrent weights (means and spreads) times this.",
                "type": "number",
                "exclusiveMinimum": 0,
            },
            "background_rate_scale": {
                "description": "The background (external Poisson) rate times this; with input dc, the current "
                "that stands for it.",
                "type": "number",
                "exclusiveMinimum": 0,
            },
            "delay_steps": {
                "description": "Every recurrent delay this many time steps (0.1 ms) longer.",
                "type": "integer",
                "minimum": 0,
            },
            "population_indegree": {
                "description": "The recurrent in-degrees of one population (synapses onto it) times `scale`.",
                "type": "object",
                "additionalProperties": False,
                "required": ["population", "scale"],
                "properties": {
                    "population": {"type": "string", "enum": list(POPULATIONS)},
                    "scale": {"type": "number", "exclusiveMinimum": 0},
                },
            },
        },
    },
)


class PD14(NetworkModel):
    """The Potjans & Diesmann (2014) cortical microcircuit, at a neuron and an in-degree scale."""

    name = "pd14"
    title = "PD14"
    populations = POPULATIONS
    dt_ms = DT_MS
    parameter_schema = PARAMETERS
    # Senk et al. 2026 (Neuromorph. Comput. Eng. 6:012001): their checklist and living table.
    race = {
        "study": "Senk et al. 2026",
        "checklist": {
            "t_presim_ms": 500.0,
            "seeds": 10,
            "accuracy_t_sim_ms": 900_000.0,
            "performance_t_sim_ms": 10_000.0,
        },
        "table": "race_reference.csv",
    }

    # A network drawn once by NEST (network_seed): derived in NEST's environment, read by every builder.
    description_environment = "nest"
    description_module = "snnbench.network.simulators.nest.export"

    def description_key(self, params: dict) -> str | None:
        return exported.key(params)

    def description_params(self, params: dict) -> dict:
        return exported.params(params)

    def results(self, params: dict, rank_results: list[dict]) -> dict:
        """Which exported network the point ran (the digest of the bytes its ranks read); {}: a network the
        simulator drew."""
        return exported.identity(params, rank_results)

    def size(self, params: dict) -> Size:
        net = network(params)  # a perturbation's in-degrees included
        return Size(num_neurons=net.num_neurons, total_synapses=net.total_synapses)

    def reference_rates(self, params: dict) -> tuple[dict, str] | None:
        return reference_rates(params["neuron_scale"], params["indegree_scale"], params["input"])

    def activity_rates(self, params: dict, results: dict) -> dict | None:
        """The published rates at this size, else the full-scale ones (derive's compensation keeps the
        full model's mean input, so rates stay near them)."""
        rates, source = self.reference_rates(params) or (
            dict(zip(POPULATIONS, FULL_MEAN_RATES_HZ.tolist(), strict=True)),
            REFERENCE_RATES_HZ[(1.0, 1.0, "poisson")][1],
        )
        return {"rates_hz": rates, "source": source}

    def description_asked(self, experiment: dict) -> str | None:
        return "pd14.network_seed" if experiment.get("pd14", {}).get("network_seed") is not None else None

    def check(self, where: str, experiment: dict, params: list[dict]) -> list[str]:
        """Model sizes so small that a population has no neuron (it would fail inside the simulator), and
        an exported network asked of more than one MPI rank, a perturbation beside an exported network."""
        problems = exported.rank_problems(where, experiment)
        if "perturbation" in experiment["pd14"] and "network_seed" in experiment["pd14"]:
            problems.append(f"{where}: pd14.perturbation changes the network every simulator draws, not NEST's export")
        smallest = min(p["neuron_scale"] for p in params)
        with np.errstate(over="ignore"):  # in floats: an integer scale past int64 overflows an int array
            sizes = np.round(FULL_NUM_NEURONS * float(smallest))
        if sizes.min() >= 1:
            return problems
        key = "neuron_scale" if "neuron_scale" in experiment["pd14"] else "neuron_scale_per_vp"
        return [
            *problems,
            f"{where}: pd14.{key} gives populations without neurons (neuron scale {smallest:g}: "
            f"{dict(zip(POPULATIONS, sizes.astype(int).tolist(), strict=True))}); the smallest scale with a neuron in "
            f"every population is {1 / FULL_NUM_NEURONS.min():.2e}",
        ]

    def estimate_mem_mb(self, spec: dict) -> int:
        return estimate_mem_mb(spec)
