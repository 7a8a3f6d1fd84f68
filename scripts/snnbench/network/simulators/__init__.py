"""The network family's simulators by name: the environment each point runs in, its MPI and GPUs,
the models it builds.

This registry is the one list of simulator names: the config schema's `simulators` enum is made
from it. Adding a simulator: a backend module (a Backend subclass per model it runs: `builders`),
one entry here, and one envs/<environment>.yaml; nothing else names it. A model may also bring
builders for existing simulators (snnbench.network.models.base.NetworkModel.builders). Simulators
kept outside the package are registered by the environment variable SNNBENCH_NETWORK_SIMULATORS,
"name=module:attribute" (a `Simulator`) separated by commas: every process of a run inherits it.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from snnbench import environments
from snnbench.environments import EnvironmentMissing, builds
from snnbench.machine import module_tools
from snnbench.network import models
from snnbench.paths import REPO

EXTRA_VARIABLE = "SNNBENCH_NETWORK_SIMULATORS"


@dataclass(frozen=True)
class Simulator:
    environment: str  # envs/<environment>.yaml
    mpi_environment: str | None = None  # for points with more than one MPI rank; None: no MPI support
    gpus: int = 0  # GPUs a point needs (requested from SLURM, recorded in the spec's resources)
    # The package an experiment's `builds` replace (snnbench.environments.builds); None: the simulator has no builds.
    build_package: str | None = None
    # The experiment's key of the simulator's options (the spec's simulator_options); None: it has none.
    options: str | None = None
    # "module:attribute": the JSON schema of that options block, composed into the config schema (light: planning
    # reads it). Simulators sharing an options key name the same schema.
    options_schema: str | None = None
    # model -> "module:Class": the Backend that builds the model on this simulator.
    builders: dict[str, str] = field(default_factory=dict)
    # "module:function" (where, experiment) -> problems: the options this simulator cannot honour,
    # refused before any job (light: planning must not load a backend). None: no check.
    option_check: str | None = None
    # Models whose network, drawn once into a description (PD14's pd14.network_seed), its builder reads.
    reads: tuple[str, ...] = ()
    # label -> timer: its detailed timers of the simulate phase (its `timers()`), in plotting order; the
    # points table's `simulate_detail_<label>_s` (snnbench.network.rows), the RTF panel's parts. Empty:
    # none named (the panel shows every simulate timer its records have).
    detailed_timers: dict[str, str] = field(default_factory=dict)


NEST = "snnbench.network.simulators.nest"
BRIAN2 = "snnbench.network.simulators.brian2"
GENN = {
    "pd14": "snnbench.network.simulators.genn.pd14:GennBackend",
    "multi_area_model": "snnbench.network.simulators.genn.multi_area:MultiAreaGenn",
}
BRIAN2_PD14 = {"pd14": f"{BRIAN2}.pd14:Brian2Backend"}
GENN_OPTIONS = "snnbench.network.simulators.genn.options:problems"
GENN_SCHEMA = "snnbench.network.simulators.genn.options:SCHEMA"
BRIAN2_OPTIONS = f"{BRIAN2}.options:SCHEMA"
# Builders that read the PD14 network NEST exported once (pd14.network_seed) instead of drawing their own.
EXPORTED = ("pd14",)
# NEST's timers of the simulate phase in a build with detailed timers (-Dwith-detailed-timers=ON), as in
# beNNch's figures.
NEST_DETAILED_TIMERS = {
    "update": "time_update",
    "collocate": "time_collocate_spike_data",
    "communicate": "time_communicate_spike_data",
    "deliver": "time_deliver_spike_data",
}


def brian2_device(environment: str, gpus: int = 0, builders: dict = BRIAN2_PD14) -> Simulator:
    """A Brian2 device: the brian2 options block, PD14's builder, the exported network read."""
    return Simulator(
        environment=environment,
        gpus=gpus,
        options="brian2",
        options_schema=BRIAN2_OPTIONS,
        builders=builders,
        reads=EXPORTED,
    )


def genn_backend(gpus: int) -> Simulator:
    """A PyGeNN backend (CUDA with a GPU, single-threaded CPU without): the genn options block and its check."""
    return Simulator(
        environment="pygenn",
        gpus=gpus,
        options="genn",
        options_schema=GENN_SCHEMA,
        builders=GENN,
        option_check=GENN_OPTIONS,
        reads=EXPORTED,
    )


SIMULATORS = {
    "nest": Simulator(
        environment="nest",
        mpi_environment="nest-mpi",
        build_package="nest-simulator",
        builders={
            "pd14": f"{NEST}.pd14:NestBackend",
            "hpc_benchmark": f"{NEST}.hpc_benchmark:HpcBenchmarkNest",
            "multi_area_model": f"{NEST}.multi_area:MultiAreaNest",
        },
        reads=EXPORTED,
        detailed_timers=NEST_DETAILED_TIMERS,
    ),
    "pynn-nest": Simulator(
        environment="pynn-nest",
        mpi_environment="nest-mpi",
        build_package="nest-simulator",
        builders={"pd14": "snnbench.network.simulators.pynn_nest:PynnNestBackend"},
        reads=EXPORTED,
        detailed_timers=NEST_DETAILED_TIMERS,
    ),
    # Brian2's devices; their pins conflict, so each family of devices has an environment of its own.
    "brian2-runtime": brian2_device("brian2"),
    "brian2-cpp": brian2_device(
        "brian2", builders={**BRIAN2_PD14, "hpc_benchmark": f"{BRIAN2}.hpc_benchmark:HpcBenchmarkBrian2"}
    ),
    "brian2-genn": brian2_device("brian2genn", gpus=1),
    "brian2-genn-cpu": brian2_device("brian2genn"),
    "brian2-cuda": brian2_device("brian2cuda", gpus=1),
    # PyGeNN 5, built from GeNN's source (envs/pygenn.yaml): its CUDA and single-threaded CPU backends.
    "genn": genn_backend(gpus=1),
    "genn-cpu": genn_backend(gpus=0),
    # INM-6's own simulation of the multi-area model in the model's environment: its reference run.
    "nest-inm6": Simulator(
        environment="multi-area-model",
        builders={"multi_area_model": "snnbench.network.simulators.inm6:Inm6Backend"},
    ),
}


@cache
def _registered(extra: str) -> dict[str, Simulator]:
    found = dict(SIMULATORS)
    for item in extra.split(","):
        if "=" in item:
            name, target = item.strip().split("=", 1)
            module, attribute = target.split(":")
            found[name] = getattr(importlib.import_module(module), attribute)
    return found


def registered() -> dict[str, Simulator]:
    """Every simulator: the package's, then those named by SNNBENCH_NETWORK_SIMULATORS."""
    return _registered(os.environ.get(EXTRA_VARIABLE, ""))


def builder(simulator: str, model: str) -> str | None:
    """ "module:Class" of the Backend that builds `model` on `simulator`: the simulator's, else the
    model's own; None: the model does not run on it."""
    return registered()[simulator].builders.get(model) or models.get(model).builders.get(simulator)


def simulators_of(model: str) -> list[str]:
    """The simulators that build `model`."""
    return [name for name in registered() if builder(name, model)]


def options_schemas() -> dict[str, dict]:
    """options key -> the JSON schema of its block, from the simulators that name one."""
    found = {}
    for name, simulator in registered().items():
        if simulator.options and simulator.options_schema:
            module, attribute = simulator.options_schema.split(":")
            schema = getattr(importlib.import_module(module), attribute)
            if found.setdefault(simulator.options, schema) is not schema:
                raise ValueError(f"simulator {name!r} names another schema for the options {simulator.options!r}")
    return found


def option_problems(where: str, experiment: dict) -> list[str]:
    """The experiment's options that one of its simulators cannot honour."""
    checks = dict.fromkeys(registered()[name].option_check for name in experiment["simulators"])
    problems = []
    for check in filter(None, checks):
        module, function = check.split(":")
        problems += getattr(importlib.import_module(module), function)(where, experiment)
    model = experiment.get("model", models.DEFAULT)
    asked = models.get(model).description_asked(experiment)
    unable = [name for name in experiment["simulators"] if model not in registered()[name].reads]
    if asked and unable:
        able = [name for name, simulator in registered().items() if model in simulator.reads]
        problems.append(
            f"{where}: {asked}: {', '.join(unable)} cannot read an exported network; simulators that can: "
            f"{', '.join(able)}"
        )
    return problems


def get_builder(simulator: str, model: str):
    """The Backend class that builds `model` on `simulator`, imported on demand (one simulator's
    environment need not hold the others')."""
    if simulator not in registered():
        raise ValueError(f"unknown simulator {simulator!r}; known: {', '.join(sorted(registered()))}")
    found = builder(simulator, model)
    if found is None:
        raise ValueError(
            f"model {model!r} has no builder for {simulator!r}; it runs on {', '.join(simulators_of(model))}"
        )
    module, cls = found.split(":")
    return getattr(importlib.import_module(module), cls)


def environment_for(spec: dict) -> str:
    """The environment a point runs in: chosen by simulator and, for MPI, by the point's shape."""
    simulator = registered()[spec["simulator"]]
    if spec["resources"]["ranks"] > 1:
        if simulator.mpi_environment is None:
            raise EnvironmentMissing(f"simulator {spec['simulator']!r} does not run on several MPI ranks")
        return simulator.mpi_environment
    return simulator.environment


def python_for(spec: dict, repo: Path = REPO, environ: dict | None = None) -> str:
    """The interpreter of the point's environment: the one its modules put on PATH for a point of a
    module build (environ: the environment with them loaded, snnbench.machine.module_tools.load), this
    checkout's link of its build's (rules build_environment and link_environment) for a point of
    another build, else the simulator's."""
    if "build" in spec and builds.is_modules(spec["build"]):
        if environ is None:
            raise EnvironmentMissing(f"build {spec['build']['name']}: its modules are not loaded")
        return module_tools.python(environ)
    if "build" in spec:
        return builds.python(spec["build"], repo)
    return environments.python(environment_for(spec), repo)
