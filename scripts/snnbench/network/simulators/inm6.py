"""Simulator `nest-inm6`: INM-6's own NEST simulation of the multi-area model (multiarea_model/simulation.py
of INM-6/multi-area-model v1.2.0, run as it is but for the three edits NEST 3.10 and numpy 2 need,
snnbench.environments.sources), in the model's environment: the reference the other simulators' rates are
judged against (the model's reference_simulator). One MPI rank, threads as the point's shape.

Its phases are INM-6's own steps: setup (its MultiAreaModel and Simulation objects: the network derived
again from the same parameters), create (the kernel, the recording device, the areas with their
populations and the connections inside each), connect (the cortico-cortical connections and the Poisson
input that replaces non-simulated areas), then NEST's Prepare and Run as for every NEST point. Its spike
recorder records to memory from the end of the presimulation on.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from snnbench.network.models import multi_area
from snnbench.network.simulators.base import Backend, RankOutput
from snnbench.network.simulators.nest_kernel import NestRunPhases, build_info


class Inm6Backend(NestRunPhases, Backend):
    name = "nest-inm6"
    library_package = "nest"

    def setup(self) -> None:
        from snnbench.network.models import multi_area_derive

        self.work = tempfile.TemporaryDirectory(prefix="snnbench-inm6-")
        tree = multi_area_derive.working_copy(Path(self.work.name))
        sys.path.insert(0, str(tree))
        import nest
        from multiarea_model import MultiAreaModel

        self.nest = nest
        params = multi_area.description_params(self.model)
        spec = multi_area_derive.model_spec(params, tree, list(multi_area.AREAS))
        res = self.spec["resources"]
        simulation = {
            "t_sim": self.model["t_presim_ms"] + self.model["t_sim_ms"],
            "local_num_threads": res["threads_per_rank"],
            "rng_seed": self.spec["seed"],
            "areas_simulated": params["areas_simulated"],
            "dt": multi_area.DT_MS,
        }
        self.network = MultiAreaModel(spec, simulation=True, sim_spec=simulation)
        self.simulation = self.network.simulation

    def create(self) -> None:
        simulation = self.simulation
        simulation.prepare()
        simulation.create_recording_devices()
        recorder = {"record_to": "memory", "start": self.model["t_presim_ms"]}
        self.nest.SetStatus(simulation.spike_detector, recorder)
        simulation.create_areas()

    def connect(self) -> None:
        self.simulation.cortico_cortical_input()

    def recurrent_synapses(self) -> int:
        """NEST's connections less the devices' (Poisson sources and the spike recorder)."""
        nest = self.nest
        generators = nest.GetNodes({"model": "poisson_generator"})
        devices = len(nest.GetConnections(source=generators)) if len(generators) else 0
        devices += len(nest.GetConnections(target=self.simulation.spike_detector))
        return int(nest.GetKernelStatus("num_connections")) - devices

    def output(self) -> RankOutput:
        nest = self.nest
        events = self.simulation.spike_detector.get("events")
        populations = [area.gids[pop] for area in self.simulation.areas for pop in area.populations]
        build = build_info(nest)
        out = RankOutput(
            rank=nest.Rank(),
            num_ranks=nest.NumProcesses(),
            threads=nest.local_num_threads,
            local_synapses=self.recurrent_synapses(),
            population_first_ids=[int(p[0].global_id) for p in populations],
            spike_senders=np.asarray(events["senders"]).astype(np.int64),
            spike_times_ms=np.asarray(events["times"]).astype(float),
            simulator_version=build["version"],
            spike_counter=self.spike_counter,
            simulator_info={"code": "INM-6/multi-area-model 1.2.0 (multiarea_model/simulation.py)"},
        )
        self.work.cleanup()
        return out
