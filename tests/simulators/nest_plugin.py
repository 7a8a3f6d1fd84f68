"""A simulator kept outside the package, for the test of the simulator seam: NEST's PyNEST as its own
simulator `nest-plugin`, registered by SNNBENCH_NETWORK_SIMULATORS="nest-plugin=nest_plugin:SIMULATOR".
What adding a simulator takes: this backend module, the registry entry below and an environment file
(here NEST's own, envs/nest.yaml). Nothing in snnbench names it.
"""

from __future__ import annotations

from snnbench.network.simulators import Simulator
from snnbench.network.simulators.nest.pd14 import NestBackend

SIMULATOR = Simulator(environment="nest", builders={"pd14": "nest_plugin:PluginBackend"})


class PluginBackend(NestBackend):
    """PD14 on NEST, under another simulator's name."""

    name = "nest-plugin"
