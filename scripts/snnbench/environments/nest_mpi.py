"""NEST with MPI and detailed timers into an environment: the install step of envs/nest-mpi.yaml, which
snnbench.environments.maker runs with the environment's folder and the site's toolchain loaded
(snnbench.environments.toolchain); by hand: `python -P scripts/snnbench/environments/nest_mpi.py VENV`.

The PyPI wheel of nest-simulator has no MPI, so NEST is built from the PyPI sdist, once per machine and
toolchain: the wheel is cached under ${SNNBENCH_CACHE:-~/.cache/snnbench}/wheels/<key> and reused by every
later environment, the sdist beside it. The build compiles the models PD14, hpc_benchmark and PyNN's
standard types use (NEST's -Dwith-models), a fraction of the full model set's ~25 min on 2 cores.
`--configure-only FOLDER` stops after CMake's configure step in FOLDER (what the toolchain test runs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from snnbench.environments import builds, toolchain

VERSION = "3.10.0"
MODELS = (
    "iaf_psc_exp;iaf_psc_alpha;iaf_psc_delta;iaf_cond_exp;iaf_cond_alpha;iaf_cond_exp_sfa_rr;aeif_cond_alpha"
    ";aeif_cond_exp;gif_cond_exp;hh_cond_exp_traub;izhikevich;poisson_generator;dc_generator;ac_generator"
    ";noise_generator;step_current_generator;spike_generator;gamma_sup_generator;ppd_sup_generator"
    ";parrot_neuron;spike_recorder;multimeter;weight_recorder;static_synapse;stdp_synapse;tsodyks_synapse"
    ";bernoulli_synapse;quantal_stp_synapse;stdp_pl_synapse_hom"
)
DEFINES = {"with-mpi": "ON", "with-detailed-timers": "ON", "with-models": MODELS}
# Set by the maker where a toolchain is loaded (snnbench.environments.toolchain.identity): part of the wheel's key.
TOOLCHAIN_ID = "SNNBENCH_TOOLCHAIN_ID"


def defines(env: dict) -> dict[str, str]:
    """The CMake options NEST with MPI is configured and built with: DEFINES and the MPI wrappers the toolchain
    check found (snnbench.environments.toolchain.mpi_defines)."""
    return {**DEFINES, **toolchain.mpi_defines(env)}


def cache() -> Path:
    return Path(os.environ.get("SNNBENCH_CACHE", Path.home() / ".cache" / "snnbench")) / "wheels"


def wheel_folder(environ=os.environ) -> Path:
    """The cached wheel's folder: its key names everything that changes the build (the models' hash as the
    shell script of old made it, so its wheels stay reused; the toolchain's identity where one is loaded)."""
    models = hashlib.sha256((MODELS + "\n").encode()).hexdigest()[:8]
    toolchain = f"-toolchain-{environ[TOOLCHAIN_ID]}" if environ.get(TOOLCHAIN_ID) else ""
    return cache() / f"nest-{VERSION}-mpi-detailed-timers-{models}{toolchain}"


def _run(command: list[str], env: dict, what: str) -> None:
    print(f"[nest-mpi] {what}: {' '.join(command)}", flush=True)
    subprocess.run(command, env=env, check=True)


def sdist(venv: Path, env: dict) -> Path:
    """NEST's sdist from PyPI, downloaded once into the cache (metadata made in `venv`, which has the tools)."""
    archive = cache() / f"nest_simulator-{VERSION}.tar.gz"
    if not archive.exists():
        archive.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=archive.parent) as folder:
            command = [*builds.pip(venv), "download", "--quiet", "--no-deps", "--no-build-isolation"]
            _run([*command, "--no-binary", "nest-simulator", "-d", folder, f"nest-simulator=={VERSION}"], env, "sdist")
            os.replace(next(Path(folder).glob("nest_simulator-*.tar.gz")), archive)
    return archive


def configure(venv: Path, folder: Path, env: dict) -> Path:
    """CMake's configure step of the sdist's tree in `folder`, with the options the wheel is built with;
    returns its CMakeCache.txt."""
    tree = folder / "source"
    if not tree.is_dir():
        with tarfile.open(sdist(venv, env)) as archive:
            archive.extractall(folder / "unpacked", filter="data")
        next((folder / "unpacked").iterdir()).rename(tree)
    command = ["cmake", "-S", str(tree), "-B", str(folder / "build"), "-Dwith-python=ON"]
    command += [f"-DPython_EXECUTABLE={venv / 'bin' / 'python'}", *(f"-D{k}={v}" for k, v in defines(env).items())]
    _run(command, dict(env, PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"), "configuring NEST")
    return folder / "build" / "CMakeCache.txt"


def build_wheel(venv: Path, env: dict) -> Path:
    """The wheel, built once per key. Without isolation, so that CMake finds this environment's mpi4py and
    numpy, and without pip's wheel cache, whose key leaves out the CMake settings."""
    folder = wheel_folder(env)
    python = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"],
        capture_output=True,
        text=True,
        check=True,
    )
    pyver = python.stdout.strip()
    found = sorted(folder.glob(f"nest_simulator-{VERSION}-{pyver}-*.whl"))
    if found:
        print(f"[nest-mpi] the cached build: {found[0]}", flush=True)
        return found[0]
    print(f"[nest-mpi] building NEST {VERSION} with MPI from the PyPI sdist (once; cache: {folder})", flush=True)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    settings = [f"--config-settings=cmake.define.{k}={v}" for k, v in defines(env).items()]
    command = [*builds.pip(venv), "wheel", "-v", "--no-cache-dir", "--no-deps", "--no-build-isolation", *settings]
    build_env = dict(env, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 1))
    _run([*command, "--wheel-dir", str(partial), str(sdist(venv, env))], build_env, "building the wheel")
    folder.mkdir(parents=True, exist_ok=True)
    wheel = next(partial.glob("nest_simulator-*.whl"))
    os.replace(wheel, folder / wheel.name)
    shutil.rmtree(partial, ignore_errors=True)
    return folder / wheel.name


def install(venv: Path, env: dict, configure_only: Path | None = None) -> Path:
    """NEST with MPI into `venv` (the cached wheel, else built); with configure_only, CMake's configure step
    in that folder instead. Returns the wheel, or the configure step's CMakeCache.txt."""
    _run([*builds.pip(venv), "install", "--quiet", *builds.SOURCE_BUILD_TOOLS], env, "installing the build tools")
    if configure_only:
        return configure(venv, configure_only, env)
    wheel = build_wheel(venv, env)
    _run([*builds.pip(venv), "install", "--quiet", "--no-deps", str(wheel)], env, "installing the wheel")
    check = "import nest; assert nest.GetKernelStatus('build_info')['have_mpi'], 'NEST built without MPI'"
    _run([str(venv / "bin" / "python"), "-c", check], env, "checking NEST's MPI")
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venv", type=Path, help="the environment's folder")
    parser.add_argument("--configure-only", type=Path, metavar="FOLDER", help="stop after CMake's configure step")
    args = parser.parse_args(argv)
    try:
        print(install(args.venv.absolute(), dict(os.environ), args.configure_only), flush=True)
    except (subprocess.CalledProcessError, OSError, StopIteration) as error:
        print(f"error: NEST with MPI: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
