"""The network family's simulators by name: the environment each point runs in, its MPI and GPUs.

This registry is the one list of simulator names: the config schema's `simulators` enum is tested
equal to it. Adding a simulator: one entry here, one envs/<environment>.yaml, and a builder per
model it runs (a Backend subclass, named in the model's `builders`: snnbench.network.models).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from snnbench import environments
from snnbench.environments import EnvironmentMissing, builds
from snnbench.machine import lmod
from snnbench.network import models
from snnbench.paths import REPO


@dataclass(frozen=True)
class Simulator:
    environment: str  # envs/<environment>.yaml
    mpi_environment: str | None = None  # for points with more than one MPI rank; None: no MPI support
    gpus: int = 0  # GPUs a point needs (requested from SLURM, recorded in the spec's resources)
    # The package an experiment's `builds` replace (snnbench.environments.builds); None: the simulator has no builds.
    build_package: str | None = None
    # The experiment's key of the simulator's options (the spec's simulator_options); None: it has none.
    options: str | None = None


SIMULATORS = {
    "nest": Simulator(
        environment="nest",
        mpi_environment="nest-mpi",
        build_package="nest-simulator",
    ),
    "pynn-nest": Simulator(
        environment="pynn-nest",
        mpi_environment="nest-mpi",
        build_package="nest-simulator",
    ),
    # Brian2's devices; their pins conflict, so each family of devices has an environment of its own.
    "brian2-runtime": Simulator(environment="brian2", options="brian2"),
    "brian2-cpp": Simulator(environment="brian2", options="brian2"),
    "brian2-genn": Simulator(environment="brian2genn", gpus=1, options="brian2"),
    "brian2-genn-cpu": Simulator(environment="brian2genn", options="brian2"),
    "brian2-cuda": Simulator(environment="brian2cuda", gpus=1, options="brian2"),
    # PyGeNN 5, built from GeNN's source (envs/pygenn.yaml): its CUDA and single-threaded CPU backends.
    "genn": Simulator(environment="pygenn", gpus=1, options="genn"),
    "genn-cpu": Simulator(environment="pygenn", options="genn"),
}


def get_builder(simulator: str, model: str):
    """The Backend class that builds `model` on `simulator`, imported on demand (one simulator's
    environment need not hold the others')."""
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; known: {', '.join(sorted(SIMULATORS))}")
    builders = models.get(model).builders
    if simulator not in builders:
        raise ValueError(f"model {model!r} has no builder for {simulator!r}; it has: {', '.join(builders)}")
    module, cls = builders[simulator].split(":")
    return getattr(importlib.import_module(module), cls)


def environment_for(spec: dict) -> str:
    """The environment a point runs in: chosen by simulator and, for MPI, by the point's shape."""
    simulator = SIMULATORS[spec["simulator"]]
    if spec["resources"]["ranks"] > 1:
        if simulator.mpi_environment is None:
            raise EnvironmentMissing(f"simulator {spec['simulator']!r} does not run on several MPI ranks")
        return simulator.mpi_environment
    return simulator.environment


def python_for(spec: dict, repo: Path = REPO, environ: dict | None = None) -> str:
    """The interpreter of the point's environment: the one its modules put on PATH for a point of a
    module build (environ: the environment with them loaded, snnbench.machine.lmod.load), this
    checkout's link of its build's (rules build_environment and link_environment) for a point of
    another build, else the simulator's."""
    if "build" in spec and builds.is_modules(spec["build"]):
        if environ is None:
            raise EnvironmentMissing(f"build {spec['build']['name']}: its modules are not loaded")
        return lmod.python(environ)
    if "build" in spec:
        return builds.python(spec["build"], repo)
    return environments.python(environment_for(spec), repo)
