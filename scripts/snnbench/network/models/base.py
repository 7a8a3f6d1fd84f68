"""The interface every network model implements.

A model is data and arithmetic: its populations, its size at a neuron and in-degree scale (neurons
per population, expected synapses), the activity it should show, the checks of its config block
that the schema cannot make, and a memory estimate. How it is built is per simulator: a Backend
subclass (snnbench.network.simulators.base) named by the simulator's registry entry or by the
model's own `builders`.
Every model's parameter block (the experiment's key of the model's name) has the keys the family
reads: neuron_scale (or neuron_scale_per_vp for weak scaling), indegree_scale, t_presim_ms,
t_sim_ms, record_spikes and input.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def parameter_block(description: str, neuron_scale: str, indegree_scale: str, inputs: dict[str, str], **keys) -> dict:
    """A model's parameter block for the config schema (its `parameter_schema`): the keys every model
    has, described in the model's words (neuron_scale, indegree_scale; inputs: each `input` value
    with what it means), with the defaults and descriptions of `keys` (t_presim_ms, t_sim_ms, ...:
    {"description": ..., "default": ...}) over the common ones. The rules every block gets (required
    for its model, one neuron scale per scaling) come from snnbench.network.schema."""
    number = {"type": "number", "exclusiveMinimum": 0}
    properties = {
        "neuron_scale": {"description": neuron_scale, **number},
        "neuron_scale_per_vp": {
            "description": "Neuron scale per virtual process (weak scaling): each point runs neuron_scale = "
            "neuron_scale_per_vp x VPs.",
            **number,
        },
        "indegree_scale": {"description": indegree_scale, **number, "maximum": 1},
        "t_presim_ms": {
            "description": "Presimulation (start-up transient, not measured as simulation), ms.",
            "type": "number",
            "minimum": 0,
            "default": 100.0,
        },
        "t_sim_ms": {"description": "Measured simulation time, ms (model time).", **number, "default": 1000.0},
        "input": {
            "description": "External drive: " + "; ".join(f"{name}: {what}" for name, what in inputs.items()) + ".",
            "type": "string",
            "enum": list(inputs),
            "default": next(iter(inputs)),
        },
        "record_spikes": {
            "description": "Record all spikes of the measured window (needed for rates and the activity check).",
            "type": "boolean",
            "default": True,
        },
    }
    for key, overrides in keys.items():
        properties[key] = {**properties.get(key, {}), **overrides}  # a model's own key, or a common one's changes
    return {
        "description": description,
        "type": "object",
        "additionalProperties": False,
        "required": ["indegree_scale"],
        "properties": properties,
    }


@dataclass(frozen=True)
class Size:
    """A model at one scale: neurons per population (in population order) and the expected number
    of recurrent synapses."""

    num_neurons: np.ndarray
    total_synapses: int

    @property
    def total_neurons(self) -> int:
        return int(self.num_neurons.sum())


class NetworkModel:
    name = "abstract"
    title = "abstract"  # in words, for captions
    populations: tuple[str, ...] = ()
    dt_ms = 0.1  # the simulation resolution; model times must be multiples of it
    # simulator -> "module:Class": Backends this model brings for simulators whose registry entry
    # does not build it (a model kept outside the package builds itself on existing simulators;
    # the package's models are built by the simulators' entries, snnbench.network.simulators).
    builders: dict[str, str] = {}
    # JSON schema of the model's parameter block, composed into the config schema (snnbench.network.schema;
    # parameter_block writes the keys every model has).
    parameter_schema: dict | None = None
    # Figures of the model's experiments beside the config's (figure name -> panel names).
    figures: dict[str, list[str]] = {}
    # The community race the model is raced in (snnbench.network.race): `study` (who defined it),
    # `checklist` (warm-up, seeds, model time of each recipe) and `table` (its living table, a CSV
    # beside snnbench.network.race). None: the model has no race, and a `race:` block is refused.
    race: dict | None = None
    # The simulator the others' rates are compared with (the table's rates_agree_with_<simulator>).
    reference_simulator = "nest"
    # A model whose network is derived into a description first (snnbench.network.models.multi_area):
    # the environment and the module (`python -m <module> PARAMS_JSON OUT_JSON`) that derive it.
    description_environment: str | None = None
    description_module: str | None = None

    def description_key(self, params: dict) -> str | None:
        """The folder of the point's network description (paths.NETWORK_DESCRIPTION); None: the
        model's network is built from its parameters alone."""
        return None

    def description_params(self, params: dict) -> dict:
        """What the description is derived from (what defines it, nothing about the run)."""
        return {}

    def description_asked(self, experiment: dict) -> str | None:
        """The config key that asks the experiment's simulators to read a description drawn once instead
        of building the network themselves (each simulator's entry says whether its builder can:
        Simulator.reads); None: the experiment does not ask it."""
        return None

    def populations_of(self, params: dict) -> tuple[str, ...]:
        """The populations of the network at these parameters, in the builders' order."""
        return self.populations

    def size(self, params: dict) -> Size:
        raise NotImplementedError

    def reference_rates(self, params: dict) -> tuple[dict, str] | None:
        """Published mean rate per population at this size, and where they come from; None: none."""
        return None

    def activity_rates(self, params: dict, results: dict) -> dict | None:
        """The rates the activity check's bounds come from (snnbench.network.judging.activity_bounds.from_model):
        `rates_hz` per population, `source` in words, `upper_only` where they are an upper end of the model's
        regime rather than its rates (no floor then); None: the model has none, and the config's bounds judge.
        results: from results(). Default: the published rates at this size (reference_rates)."""
        reference = self.reference_rates(params)
        return None if reference is None else {"rates_hz": reference[0], "source": reference[1]}

    def check(self, where: str, experiment: dict, params: list[dict]) -> list[str]:
        """Problems of the experiment's parameter block (params: each point's) the schema cannot
        express, each naming the key."""
        return []

    def results(self, params: dict, rank_results: list[dict]) -> dict:
        """The model's own results from what each rank's builder reported in
        RankOutput.model_results (e.g. weights after plasticity); {}: none."""
        return {}

    def table_columns(self, results: dict) -> dict:
        """Columns of the points table from results() (e.g. weight statistics); {}: none."""
        return {}

    def activity_problems(self, params: dict, populations: list[dict], results: dict) -> list[str]:
        """What makes a run's activity implausible for this model beyond the config's bounds
        (populations: the statistics per population; results: from results())."""
        return []

    def estimate_mem_mb(self, spec: dict) -> int:
        """Memory to request per node for a point."""
        raise NotImplementedError
