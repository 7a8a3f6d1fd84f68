"""Environments by name: the interpreter a point's child process runs with.

An environment is a file envs/<name>.yaml, or <name>.yaml in a folder named by the environment
variable SNNBENCH_ENVIRONMENTS (folders separated by the path separator, ':'): a plugin's own
environment (a simulator kept outside the package); every process of a run inherits it, and envs/
comes first. `make env` installs the MAIN ones together into .venv
(the workflow's own, with snnbench installed editable). Every other one, whose pins conflict, is
made once per machine in the per-user cache shared by checkouts (snnbench.environments.maker, rule
build_environment), at <cache>/<key>, where the key is a hash of what defines it: the file's pins,
its Python, the machine, and the install script of an environment that has one. Each checkout
then gets .venv-<name>, a thin environment on top of the cached one with this checkout's snnbench
installed editable (rule link_environment; `make env-<name>` does both). Conda users get the
environments from Snakemake's --software-deployment-method conda instead.
Which environment a point needs is its family's decision (snnbench.families).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import sys
from pathlib import Path

from snnbench.paths import ENVS, REPO

# Where cached environments live: $SNNBENCH_ENV_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/snnbench/envs.
CACHE_ENV = "SNNBENCH_ENV_CACHE"
# Folders of more environment files, after envs/ (plugins' environments).
EXTRA_VARIABLE = "SNNBENCH_ENVIRONMENTS"
# Environments that `make env` installs together into .venv.
MAIN = ("workflow", "nest", "pynn-nest", "dev")
# Environments with a step after pip: the script, called with the environment's folder (a .py file in this
# interpreter). What it compiles takes the site's toolchain, $SNNBENCH_TOOLCHAIN (snnbench.environments.toolchain).
INSTALL_SCRIPTS = {"nest-mpi": "scripts/snnbench/environments/nest_mpi.py"}
# A source built in place (`# source: <name> make`) is kept in the environment as <prefix>/<TREE>.
TREE = "source-tree"
_PIN = re.compile(r"^\s*-\s*([A-Za-z0-9_.\[\]-]+==[^\s#]+)")
_PYTHON = re.compile(r"^\s*-\s*python=([0-9.]+)")


class EnvironmentMissing(RuntimeError):
    """The point's environment is not installed; the message says how to install it."""


def folders() -> list[Path]:
    """Where environment files are looked for: envs/, then the folders of SNNBENCH_ENVIRONMENTS."""
    extra = os.environ.get(EXTRA_VARIABLE, "")
    return [ENVS, *(Path(folder).expanduser().absolute() for folder in extra.split(os.pathsep) if folder)]


def file(env: str) -> Path:
    """The file of environment `env`: <folder>/<env>.yaml in the first of folders() that holds one."""
    for folder in folders():
        if (folder / f"{env}.yaml").is_file():
            return folder / f"{env}.yaml"
    where = ", ".join(str(shown(folder)) for folder in folders())
    raise EnvironmentMissing(f"environment {env!r} has no file {env}.yaml in {where} (${EXTRA_VARIABLE} adds folders)")


def shown(path: Path) -> Path:
    """A path as messages name it: relative to the checkout where it is inside (envs/nest.yaml)."""
    return path.relative_to(REPO) if path.is_relative_to(REPO) else path


def problem(env: str) -> str | None:
    """What keeps environment `env` from being made, in one line (no file, or one that names no Python
    version); None if nothing does."""
    try:
        python_version(env)
    except EnvironmentMissing as error:
        return str(error)
    return None


def _lines(env: str) -> list[str]:
    return file(env).read_text().splitlines()


def pins(env: str, no_deps: bool = False) -> list[str]:
    """The pinned pip requirements of envs/<env>.yaml: those installed with their dependencies, or
    (no_deps) those marked `# no-deps`, installed afterwards without them (see envs/norse.yaml)."""
    return sorted({m.group(1) for line in _lines(env) if ("# no-deps" in line) == no_deps and (m := _PIN.match(line))})


def python_version(env: str) -> str:
    """The Python version envs/<env>.yaml names (`- python=3.13`)."""
    found = [m.group(1) for line in _lines(env) if (m := _PYTHON.match(line))]
    if not found:
        raise EnvironmentMissing(f"{shown(file(env))} names no Python version (a line `- python=3.11`)")
    return found[0]


def cuda_toolkit() -> bool:
    """Whether $CUDA_PATH names a CUDA toolkit: where it does, PyGeNN's build adds its CUDA backend."""
    return bool(os.environ.get("CUDA_PATH")) and Path(os.environ["CUDA_PATH"]).is_dir()


def definition(env: str) -> dict:
    """What defines environment `env`, nothing about where it is used: the content of its cache key."""
    script = INSTALL_SCRIPTS.get(env)
    # (imported here: `python -m snnbench.environments.sources` must not find it imported by its package)
    from snnbench.environments import sources, toolchain

    source = sources.source_line(_lines(env), str(shown(file(env))))
    # Only environments with a source have the key (the others' keys, and caches, stay as they were).
    extra = {"third_party": {**source, "cuda": cuda_toolkit()}} if source else {}
    site = toolchain.of_site() if script else None
    if site:  # another MPI is another environment; without one the key stays as it was
        extra["toolchain"] = site
    return {
        "environment": env,
        "python": python_version(env),
        "requirements": pins(env),
        "no_deps": pins(env, no_deps=True),
        "script": script,
        "script_sha256": hashlib.sha256((REPO / script).read_bytes()).hexdigest()[:16] if script else None,
        "machine": platform.machine(),
        **extra,
    }


def source_name(env: str) -> str | None:
    """The third-party source (snnbench.environments.sources) that envs/<env>.yaml builds, None if none."""
    return definition(env).get("third_party", {}).get("source")


def built_tree(tree: Path) -> dict:
    """A source tree built in place (GeNN 4): where it is, its version and the backends its make built."""
    version = tree / "version.txt"
    libraries = (tree / "lib").glob("libgenn_*")
    return {
        "path": str(tree),
        "version": version.read_text().strip() if version.exists() else None,
        "backends": sorted({p.name.split(".")[0].removeprefix("libgenn_") for p in libraries}),
    }


def running_source_tree() -> Path | None:
    """The source tree kept in the cached environment this interpreter stands on (a `make` or `tree`
    source: GeNN 4 for Brian2GeNN, the multi-area model), found beside its site-packages; None if none."""
    for entry in sys.path:
        if entry.endswith("site-packages"):
            tree = Path(entry).parents[2] / TREE
            if tree.is_dir():
                return tree
    return None


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "envs"
    return Path(os.environ.get(CACHE_ENV, default)).expanduser().absolute()


def cached(env_key: str) -> Path:
    """The cached environment of a key (a named environment's, or a simulator build's)."""
    return cache_root() / env_key


def made_marker(env_key: str) -> Path:
    """The file that says the cached environment is complete: its provenance (rule build_environment's output)."""
    return cached(env_key) / "build.json"


def content_key(defined: dict) -> str:
    """A cache key: the hash of what defines an environment (a named one's, or a build's)."""
    return hashlib.sha256(json.dumps(defined, sort_keys=True).encode()).hexdigest()[:16]


@functools.cache
def key(env: str) -> str:
    return content_key(definition(env))


def linked(env: str, repo: Path = REPO) -> Path:
    """This checkout's environment `env`: .venv-<env> at the repository root (.venv-build-<key> for
    a simulator build, snnbench.environments.builds)."""
    return repo / f".venv-{env}"


def link_marker(env: str, repo: Path = REPO) -> Path:
    """The file that says .venv-<env> is complete; it holds the key of the cached environment it
    stands on. (Its path holds no key: points depend on it, and an edited envs file must not make
    finished points rerun.)"""
    return linked(env, repo) / ".installed"


def is_linked(env: str, repo: Path = REPO, env_key: str | None = None) -> bool:
    """Whether .venv-<env> is complete and stands on the cached environment `env_key` (by default
    that of the envs file as it is now: an edited file has another key, and the checkout links anew)."""
    marker = link_marker(env, repo)
    # bytes: a marker of random bytes (or a folder in its place) is not linked, not a UnicodeDecodeError
    return marker.is_file() and marker.read_bytes().strip() == (env_key or key(env)).encode()


def linked_python(env: str, env_key: str, repo: Path = REPO) -> str:
    """The interpreter of this checkout's .venv-<env> on the cached environment `env_key`."""
    if not is_linked(env, repo, env_key):
        raise EnvironmentMissing(
            f"{linked(env, repo)} is not linked to {env_key} in the environment cache: the workflow makes it "
            f"(rules build_environment and link_environment)"
        )
    if not made_marker(env_key).exists():
        raise EnvironmentMissing(
            f"{linked(env, repo)} stands on {cached(env_key)}, which is gone from the environment cache: make "
            f"it again (`make env-<name>` for envs/<name>.yaml, or delete {linked(env, repo)} and run the workflow)"
        )
    return str(linked(env, repo) / "bin" / "python")


def python(env: str, repo: Path = REPO) -> str:
    """The interpreter of an environment.

    Main environments are the running one. Others: .venv-<env> of the checkout once it stands on
    the cached environment of the current envs file; else the running interpreter when Snakemake
    runs the rule in a conda environment (--software-deployment-method conda); else a clear error.
    """
    if env in MAIN:
        return sys.executable
    if is_linked(env, repo):
        return linked_python(env, key(env), repo)
    if os.environ.get("CONDA_PREFIX") == sys.prefix:
        return sys.executable
    raise EnvironmentMissing(
        f"environment {env!r} ({shown(file(env))}) is not installed in this checkout: the workflow makes it "
        f"(rule link_environment), or run `make env-{env}`, or run Snakemake with --software-deployment-method conda"
    )
