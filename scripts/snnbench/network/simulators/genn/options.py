"""The options of the PyGeNN simulators (an experiment's `genn` block) that their backends cannot honour,
refused before any job starts. Light on purpose: planning reads it without loading the backend.
"""

from __future__ import annotations


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
