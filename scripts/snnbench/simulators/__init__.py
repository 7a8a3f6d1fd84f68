"""Simulators by name: their backend class and the environment each point runs in.

The names are the `simulators` values of the config schema. Environments are files
envs/<environment>.yaml; `make` installs them into .venv (the ones in MAIN_ENVIRONMENTS) or
.venv-<environment> (the others, whose pins conflict), and conda users get them from
Snakemake's --software-deployment-method conda.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
# Environments that `make env` installs together into .venv.
MAIN_ENVIRONMENTS = ("workflow", "nest", "pynn-nest", "dev")


@dataclass(frozen=True)
class Simulator:
    backend: str  # "module:Class", imported on demand (one simulator's environment need not hold the others)
    environment: str  # envs/<environment>.yaml
    mpi_environment: str | None = None  # for points with more than one MPI rank; None: no MPI support
    gpus: int = 0  # GPUs a point needs (requested from SLURM, recorded in the spec's resources)


SIMULATORS = {
    "nest": Simulator("snnbench.simulators.nest:NestBackend", environment="nest", mpi_environment="nest-mpi"),
    "pynn-nest": Simulator(
        "snnbench.simulators.pynn_nest:PynnNestBackend", environment="pynn-nest", mpi_environment="nest-mpi"
    ),
    # Brian2's devices, one backend (snnbench.simulators.brian2_pd14); their pins conflict, so
    # each family has an environment of its own.
    "brian2-runtime": Simulator("snnbench.simulators.brian2_pd14:Brian2Backend", environment="brian2"),
    "brian2-cpp": Simulator("snnbench.simulators.brian2_pd14:Brian2Backend", environment="brian2"),
    "brian2-genn": Simulator("snnbench.simulators.brian2_pd14:Brian2Backend", environment="brian2genn", gpus=1),
    "brian2-genn-cpu": Simulator("snnbench.simulators.brian2_pd14:Brian2Backend", environment="brian2genn"),
    "brian2-cuda": Simulator("snnbench.simulators.brian2_pd14:Brian2Backend", environment="brian2cuda", gpus=1),
}


class EnvironmentMissing(RuntimeError):
    """The point's environment is not installed; the message says how to install it."""


def get_backend(name: str):
    if name not in SIMULATORS:
        raise ValueError(f"unknown simulator {name!r}; known: {', '.join(sorted(SIMULATORS))}")
    module, cls = SIMULATORS[name].backend.split(":")
    return getattr(importlib.import_module(module), cls)


def environment_for(spec: dict) -> str:
    """The environment a point runs in: chosen by simulator and, for MPI, by the point's shape."""
    simulator = SIMULATORS[spec["simulator"]]
    if spec["resources"]["ranks"] > 1:
        if simulator.mpi_environment is None:
            raise EnvironmentMissing(f"simulator {spec['simulator']!r} does not run on several MPI ranks")
        return simulator.mpi_environment
    return simulator.environment


def python_for(spec: dict, repo: Path = REPO) -> str:
    """The interpreter of the point's environment."""
    return environment_python(environment_for(spec), repo)


def environment_python(env: str, repo: Path = REPO) -> str:
    """The interpreter of an environment.

    Main environments are the running one. Others: .venv-<environment> at the repo root once
    `make` finished building it; else the running interpreter when Snakemake runs the rule in a
    conda environment (--software-deployment-method conda); else a clear error.
    """
    if env in MAIN_ENVIRONMENTS:
        return sys.executable
    venv = repo / f".venv-{env}"
    if (venv / ".installed").exists():  # `make` writes it when the environment is complete
        return str(venv / "bin" / "python")
    if os.environ.get("CONDA_PREFIX") == sys.prefix:
        return sys.executable
    raise EnvironmentMissing(
        f"environment {env!r} (envs/{env}.yaml) is not installed: run `make env-{env}`, "
        "or run Snakemake with --software-deployment-method conda"
    )


def conda_env_file(spec: dict) -> str:
    return str(REPO / "envs" / f"{environment_for(spec)}.yaml")
