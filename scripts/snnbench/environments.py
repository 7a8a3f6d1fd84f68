"""Environments by name: the interpreter a point's child process runs with.

An environment is a file envs/<name>.yaml. `make` installs the MAIN ones together into .venv
and each other one (whose pins conflict) into .venv-<name>, with snnbench itself installed
editable in each; conda users get them from Snakemake's --software-deployment-method conda.
Which environment a point needs is its family's decision (snnbench.families).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from snnbench.paths import ENVS, REPO

# Environments that `make env` installs together into .venv.
MAIN = ("workflow", "nest", "pynn-nest", "dev")


class EnvironmentMissing(RuntimeError):
    """The point's environment is not installed; the message says how to install it."""


def python(env: str, repo: Path = REPO) -> str:
    """The interpreter of an environment.

    Main environments are the running one. Others: .venv-<environment> at the repo root once
    `make` finished building it; else the running interpreter when Snakemake runs the rule in a
    conda environment (--software-deployment-method conda); else a clear error.
    """
    if env in MAIN:
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


def conda_file(env: str) -> str:
    return str(ENVS / f"{env}.yaml")
