"""The interface every simulator backend implements.

A backend builds and runs one network model in phases; the driver (`snnbench.network.run`)
times each phase call from outside, so all simulators are timed the same way. Adding a simulator
means adding a module with a `Backend` subclass per model it runs, one entry in the registry
(`snnbench.network.simulators`) and its envs/<environment>.yaml.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class RankOutput:
    """What one rank reports after the run (spikes are local to the rank)."""

    rank: int
    num_ranks: int
    threads: int
    local_synapses: int  # recurrent synapses held by this rank
    population_first_ids: list[int]  # id of the first neuron of each population
    spike_senders: np.ndarray
    spike_times_ms: np.ndarray
    simulator_version: str
    simulator_info: dict = field(default_factory=dict)
    # Spikes of this rank's neurons in the measured window from the simulator's own counter
    # (without recording them); None where the simulator has none.
    spike_counter: int | None = None
    # What the model's results() gathers over the ranks (snnbench.network.models.base).
    model_results: dict = field(default_factory=dict)


class Backend:
    """One simulator running one network model. Subclasses implement each phase as a method."""

    name = "abstract"
    # The Python package whose shared libraries are the simulator: their `ldd` goes into the
    # hardware record (snnbench.machine.hardware). None: the simulator names none.
    library_package: str | None = None

    def __init__(self, spec: dict):
        self.spec = spec
        self.model = spec["model"]

    # Phases: each called exactly once, in PHASES order (snnbench.network.phases).
    def setup(self) -> None:
        raise NotImplementedError

    def create(self) -> None:
        raise NotImplementedError

    def connect(self) -> None:
        raise NotImplementedError

    def prepare(self) -> None:
        raise NotImplementedError

    def presimulate(self) -> None:
        raise NotImplementedError

    def simulate(self) -> None:
        raise NotImplementedError

    def timers(self) -> dict[str, float]:
        """The simulator's own cumulative timers (seconds), read after every phase."""
        return {}

    def phase_split(self, phases_s: dict[str, float]) -> dict[str, float]:
        """The phase wall times the driver measured, as the simulator attributes them. Default:
        unchanged. A simulator whose compiled binary runs several phases inside one call (Brian2's
        standalone devices) splits that call's time by its device-side timers, keeping the sum."""
        return phases_s

    def output(self) -> RankOutput:
        raise NotImplementedError

    def libraries(self) -> list[str]:
        """The shared libraries of `library_package` (e.g. NEST's nestkernel_api.so)."""
        found = importlib.util.find_spec(self.library_package) if self.library_package else None
        folders = (found.submodule_search_locations or []) if found else []
        return sorted(str(p) for folder in folders for p in Path(folder).glob("*.so"))
