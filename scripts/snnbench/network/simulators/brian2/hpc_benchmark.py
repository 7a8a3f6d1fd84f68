"""hpc_benchmark on Brian2 (cpp_standalone): the devices, build cache, timer marks, phases and
output of the PD14 Brian2 backend (brian2_pd14), with this model's network from
snnbench.network.models.hpc_benchmark, built as the NEST builder builds it.

- Neurons: iaf_psc_alpha. An alpha current J·e/tau_s·t·exp(-t/tau_s) (peak J at t = tau_s) is two
  linear equations, a spike adding J·e/tau_s to `x`; the membrane is clamped during the refractory
  time while the currents go on; a spike at v >= V_th. Integrated exactly.
- Connectivity: a fixed in-degree per target drawn with numpy from the point's seed (sources
  uniform, multapses allowed, no autapses), one homogeneous delay, one Poisson input per neuron
  at the model's external rate (Brian2's own generator).
- E->E plasticity: the power-law STDP of Morrison, Aertsen & Diesmann 2007 (Neural Comput.
  19:1437) as NEST's stdp_pl_synapse_hom defines it (NEST's model documentation and header):
  on a postsynaptic spike w += lambda·w^mu·K+ (NEST's weights in pA with w0 = 1 pA, so the
  paper's w0^(1-mu) is 1), on a presynaptic spike w -= lambda·alpha·w·K- (not below 0) before
  the spike is transmitted with the new weight, K+ (per synapse, tau_plus) and K- (the
  postsynaptic trace, tau_minus, the neuron's parameter in NEST) counting spikes. NEST treats
  the whole delay d as dendritic: the synapse sees a presynaptic spike at its time and a
  postsynaptic one d later. Here the presynaptic pathway is delayed by d (the current's
  delay) and the postsynaptic pathway by 2 d, which keeps NEST's relative timing. NEST
  applies the facilitation of postsynaptic spikes lazily, at the next presynaptic spike;
  here at once (the weights read after the run can differ by the facilitation of spikes
  after each synapse's last presynaptic spike).
"""

from __future__ import annotations

import math

import numpy as np

from snnbench.network.models import hpc_benchmark as hpc
from snnbench.network.simulators.base import RankOutput
from snnbench.network.simulators.brian2.pd14 import Brian2Backend, membrane_constants, refractory_like_nest

# iaf_psc_alpha, one current for both signs (both have tau_syn).
ALPHA_EQUATIONS = """
        dv/dt = (E_L - v) / tau_m + I_syn / C_m : volt (unless refractory)
        dI_syn/dt = x - I_syn / tau_syn : amp
        dx/dt = -x / tau_syn : amp / second
        """
STDP_MODEL = """
        w : amp
        dKplus/dt = -Kplus / tau_plus : 1 (event-driven)
        dKminus/dt = -Kminus / tau_minus : 1 (event-driven)
        """
STDP_ON_PRE = """
        w = clip(w - stdp_lambda * stdp_alpha * w * Kminus, 0 * amp, w)
        x_post += w * e_per_tau_syn
        Kplus += 1
        """
STDP_ON_POST = """
        w += stdp_lambda * (w / pA) ** stdp_mu * Kplus * pA
        Kminus += 1
        """


def fixed_indegree(rng: np.random.Generator, n_source: int, n_target: int, indegree: int, same: bool):
    """Source and target indices of `indegree` inputs per target, sources uniform with
    replacement (multapses), a target never its own source when `same` population."""
    if same and n_source < 2:
        raise ValueError("a population of one neuron cannot connect to itself without autapses")
    j = np.repeat(np.arange(n_target, dtype=np.int32), indegree)
    i = rng.integers(0, n_source - int(same), j.size, dtype=np.int32)
    if same:
        i += (i >= j).astype(np.int32)  # skip the target itself
    return i, j


def initial_potentials(num_neurons, seed: int) -> list[np.ndarray]:
    """Initial membrane potentials (mV) per population, normal, from a stream of their own."""
    rng = np.random.default_rng([seed, 1])
    return [rng.normal(hpc.V0_MEAN_MV, hpc.V0_SD_MV, int(n)) for n in num_neurons]


class HpcBenchmarkBrian2(Brian2Backend):
    """hpc_benchmark on Brian2's cpp_standalone device."""

    dt_ms = hpc.DT_MS

    def derive_network(self) -> hpc.Network:
        return hpc.network(self.model)

    def create(self) -> None:
        b2, net, P = self.b2, self.net, hpc.NEURON
        self.e_per_tau_syn = math.e / (P["tau_syn_ms"] * b2.ms)  # x's jump per ampere of peak current
        self.namespace = membrane_constants(b2, P)
        v0 = initial_potentials(net.num_neurons, self.spec["seed"])
        self.groups, self.inputs, self.monitors = [], [], []
        for p, name in enumerate(hpc.POPULATIONS):
            group = b2.NeuronGroup(
                int(net.num_neurons[p]),
                ALPHA_EQUATIONS,
                threshold="v >= V_th",
                reset="v = V_reset",
                refractory=refractory_like_nest(b2, P["t_ref_ms"], self.dt_ms),
                method="exact",
                namespace=self.namespace,
                name=f"pop_{name}",
            )
            group.v = v0[p] * b2.mV
            self.groups.append(group)
            # NEST's generator draws a Poisson count per step; PoissonInput draws a binomial one, close
            # to Poisson only for many sources of small rate: the E in-degree's, as the rate is defined.
            sources = int(net.indegree[0])
            self.inputs.append(
                b2.PoissonInput(
                    group,
                    "x",
                    N=sources,
                    rate=net.external_rate_hz / sources * b2.Hz,
                    weight=net.weight_exc_pA * b2.pA * self.e_per_tau_syn,
                )
            )
            if self.model["record_spikes"]:
                self.monitors.append(b2.SpikeMonitor(group, name=f"spikes_{name}"))

    def connect(self) -> None:
        b2, net = self.b2, self.net
        rng = np.random.default_rng(self.spec["seed"])
        delay = hpc.DELAY_MS * b2.ms
        stdp = {
            "stdp_lambda": hpc.STDP["lambda"],
            "stdp_alpha": hpc.STDP["alpha"],
            "stdp_mu": hpc.STDP["mu"],
            "tau_plus": hpc.STDP["tau_plus"] * b2.ms,
            "tau_minus": hpc.NEURON["tau_minus_ms"] * b2.ms,
            "e_per_tau_syn": self.e_per_tau_syn,
        }
        self.synapses, self.binning, self.num_synapses = [], [], 0
        for source, target in ((0, 0), (0, 1), (1, 0), (1, 1)):
            label = f"{hpc.POPULATIONS[source]}_to_{hpc.POPULATIONS[target]}"
            src, tgt = self.groups[source], self.groups[target]
            if (source, target) == (0, 0):
                syn = b2.Synapses(
                    src,
                    tgt,
                    STDP_MODEL,
                    on_pre=STDP_ON_PRE,
                    on_post=STDP_ON_POST,
                    delay={"pre": delay, "post": 2 * delay},
                    namespace=stdp,
                    name=f"syn_{label}",
                )
                self.plastic = syn
            else:
                weight = net.weight_exc_pA if source == 0 else net.weight_inh_pA
                syn = b2.Synapses(
                    src,
                    tgt,
                    on_pre="x_post += w_syn * e_per_tau_syn",
                    delay=delay,
                    namespace={"w_syn": weight * b2.pA, "e_per_tau_syn": self.e_per_tau_syn},
                    name=f"syn_{label}",
                )
            i, j = fixed_indegree(rng, len(src), len(tgt), int(net.indegree[source]), same=source == target)
            syn.connect(i=i, j=j)
            if syn is self.plastic:
                syn.w = net.weight_exc_pA * b2.pA
            self.synapses.append(syn)
            self.num_synapses += int(i.size)
        self.network = b2.Network(self.groups, self.inputs, self.monitors, self.synapses)

    def output(self) -> RankOutput:
        out = super().output()
        sampled = np.asarray(self.plastic.j[:]) < hpc.WEIGHT_SAMPLE_TARGETS  # the model's sample of targets
        weights = np.asarray(self.plastic.w[:] / self.b2.pA, dtype=float)[sampled]
        out.model_results = {"ee_weights": hpc.weight_summary(weights, self.net.weight_exc_pA)}
        return out
