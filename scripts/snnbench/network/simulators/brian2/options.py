"""The options of the Brian2 simulators (an experiment's `brian2` block): its JSON schema, composed into the
config schema by snnbench.network.schema from the simulators' entries (Simulator.options_schema). Light on
purpose: planning reads it without loading Brian2.
"""

SCHEMA = {
    "description": "Options of the Brian2 simulators (brian2-*); other simulators ignore them.",
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "delay_bins": {
            "description": (
                "brian2-genn, brian2-genn-cpu: Synapses objects per projection, one per delay bin (Brian2GeNN has"
                " one delay per Synapses object). Bins hold contiguous delays of similar synapse counts; exact "
                "when at least as many as there are distinct delays (in time steps) in a projection."
            ),
            "type": "integer",
            "minimum": 1,
            "maximum": 64,
            "default": 4,
        },
        "bin_delays": {
            "description": (
                "brian2-cpp, brian2-runtime, brian2-cuda: give every synapse its delay bin's delay (as "
                "brian2-genn must), to measure what delay binning does to the activity with the same build (the "
                "delays are data there)."
            ),
            "type": "boolean",
            "default": False,
        },
        "cuda_compute_capability": {
            "description": (
                "brian2-cuda: compile for this compute capability instead of detecting the GPU (e.g. 9.0 for an "
                "H100); lets the code be generated and compiled on a machine without a GPU."
            ),
            "type": "number",
            "minimum": 3,
        },
    },
}
