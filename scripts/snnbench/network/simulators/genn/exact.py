"""NEST's iaf_psc_exp as a GeNN neuron model (the option genn.neuron_model: iaf_psc_exp).

GeNN's own LIF integrates the membrane with the synaptic current held constant over a step (its
ExpCurr current carries the right charge, not the right shape); NEST integrates the membrane and the
exponentially decaying current together, exactly (Rotter & Diesmann 1999, Biol. Cybern. 81:381):

    V <- E_L + P22 (V - E_L) + P21 I + P20 I_e        (not while refractory)
    I <- P11 I + (weights arriving this step)

with P22 = exp(-h/tau_m), P11 = exp(-h/tau_syn), P20 = tau_m/C (1 - P22) and
P21 = tau_m tau_syn / (C (tau_m - tau_syn)) (exp(-h/tau_m) - exp(-h/tau_syn)). Refractoriness is a
count of t_ref/h whole steps after the spike's step, as NEST counts it. The current is a state of
the neuron fed by GeNN's DeltaCurr (the weights arriving in the step), added after the membrane's
update as in NEST, so a synapse's dendritic delay is NEST's delay minus one step.
Measured on one exported network with DC input: docs/same-network.md.
"""

from __future__ import annotations

import math

SIM_CODE = """
if (RefracSteps == 0) {
    V = Vrest + P22 * (V - Vrest) + P21 * I + P20 * Ioffset;
}
else {
    RefracSteps -= 1;
}
I = P11 * I + Isyn;
"""
THRESHOLD_CODE = "V >= Vthresh"
RESET_CODE = """
V = Vreset;
RefracSteps = RefracStepsMax;
"""
PARAMS = ("Vrest", "Vreset", "Vthresh", "Ioffset", "P22", "P21", "P20", "P11", "RefracStepsMax")
DELAY_OFFSET_STEPS = 1  # the current is fed after the membrane's update: one step less of dendritic delay


def propagators(C_pF: float, tau_m_ms: float, tau_syn_ms: float, dt_ms: float) -> dict[str, float]:
    """NEST's propagators of iaf_psc_exp for one step (tau_syn != tau_m)."""
    p22, p11 = math.exp(-dt_ms / tau_m_ms), math.exp(-dt_ms / tau_syn_ms)
    p21 = tau_m_ms * tau_syn_ms / (C_pF * (tau_m_ms - tau_syn_ms)) * (p22 - p11)
    return {"P22": p22, "P11": p11, "P20": tau_m_ms / C_pF * (1.0 - p22), "P21": p21}


def neuron_model():
    """The GeNN neuron model (created once per process)."""
    from pygenn import create_neuron_model

    return create_neuron_model(
        "iaf_psc_exp",
        params=list(PARAMS),
        vars=[("V", "scalar"), ("I", "scalar"), ("RefracSteps", "int")],
        sim_code=SIM_CODE,
        threshold_condition_code=THRESHOLD_CODE,
        reset_code=RESET_CODE,
    )


def params(lif: dict, tau_syn_ms: float, dt_ms: float) -> dict[str, float]:
    """The model's parameters from GeNN's LIF parameters (C, TauM, Vrest, Vreset, Vthresh, Ioffset, TauRefrac)."""
    return {
        "Vrest": lif["Vrest"],
        "Vreset": lif["Vreset"],
        "Vthresh": lif["Vthresh"],
        "Ioffset": lif["Ioffset"],
        **propagators(lif["C"], lif["TauM"], tau_syn_ms, dt_ms),
        "RefracStepsMax": float(round(lif["TauRefrac"] / dt_ms)),
    }
