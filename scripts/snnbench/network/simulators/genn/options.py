"""The options of the PyGeNN simulators (an experiment's `genn` block): their JSON schema (composed into the
config schema by snnbench.network.schema from the simulators' entries, Simulator.options_schema) and what their
backends cannot honour, refused before any job starts. Light on purpose: planning reads it without loading the
backend.
"""

from __future__ import annotations

SCHEMA = {
    "description": "Options of the PyGeNN simulators (genn, genn-cpu); other simulators ignore them.",
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "procedural_connectivity": {
            "description": (
                "Regenerate connectivity, weights and delays from their seeds at every spike instead of storing "
                "them (GeNN's PROCEDURAL matrix type; the fast choice on GPUs at full scale). The record's "
                "simulator.connectivity says which was used."
            ),
            "type": "boolean",
            "default": False,
        },
        "procedural_threads_per_spike": {
            "description": (
                "With procedural_connectivity on the CUDA backend: GPU threads that share the synapses of one "
                "presynaptic spike (GeNN's num_threads_per_spike). Unset: 8, as GeNN's own PD14 example. The "
                "record's simulator.procedural_threads_per_spike says which was used."
            ),
            "type": "integer",
            "minimum": 1,
            "maximum": 1024,
        },
        "precision": {
            "description": (
                "GeNN's scalar type (GeNNModel's precision): membrane, currents and weights in single (float) or "
                "double precision. Unset: float, as GeNN's own PD14 example. The record's simulator.precision "
                "says which."
            ),
            "type": "string",
            "enum": ["float", "double"],
        },
        "neuron_model": {
            "description": (
                "LIF: GeNN's own (the membrane integrated with the synaptic current held over a step), as GeNN's "
                "PD14 example. iaf_psc_exp: NEST's exact integration of the membrane and its exponential current,"
                " a GeNN model of snnbench's (snnbench.network.simulators.genn.exact); needs pd14.network_seed "
                "and DC input. Unset: LIF."
            ),
            "type": "string",
            "enum": ["LIF", "iaf_psc_exp"],
        },
    },
}


def problems(where: str, experiment: dict) -> list[str]:
    """What the genn options ask that PyGeNN's backends cannot do."""
    options = experiment.get("genn", {})
    problems = []
    if options.get("procedural_connectivity") and "genn-cpu" in experiment["simulators"]:
        problems.append(
            f"{where}: genn.procedural_connectivity needs GeNN's CUDA backend (simulator genn): its "
            "single-threaded CPU backend (genn-cpu) has no procedural connectivity"
        )
    if "procedural_threads_per_spike" in options and not options.get("procedural_connectivity"):
        problems.append(
            f"{where}: genn.procedural_threads_per_spike applies only with genn.procedural_connectivity: true"
        )
    pd14 = experiment.get("pd14", {})
    if options.get("neuron_model") == "iaf_psc_exp" and (pd14.get("network_seed") is None or pd14.get("input") != "dc"):
        # Its input is the weights arriving in a step (DeltaCurr), not GeNN's Poisson current source.
        problems.append(
            f"{where}: genn.neuron_model iaf_psc_exp is built for an exported network with DC input: set "
            "pd14.network_seed and pd14.input: dc"
        )
    return problems
