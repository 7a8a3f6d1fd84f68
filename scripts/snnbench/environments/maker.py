"""Make one build's environment (rule build_environment): a virtual environment in the per-user
cache (snnbench.environments.builds) with the build's requirements, and for a source tree a wheel built with
its CMake options, or CMake's own install where the tree has no wheel build; then its provenance in
build.json, which marks the environment complete.

A failure (an unknown version, a CMake error) removes the half-made environment and raises
BuildFailed with a message that names the build; its points do not run, other builds' do.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from snnbench import environments
from snnbench.environments import builds, nest_mpi, sources, toolchain
from snnbench.machine.modules import ModulesError
from snnbench.paths import REPO, scripts_on_path

# Run in the new environment, with this checkout's snnbench on the path: the simulator's own account of itself
# (PyNEST's build_info, or SLI's statusdict before NEST 3.9: snnbench.network.simulators.nest_kernel.build_info).
PROBE = """
import json, sys
import nest
from snnbench.network.simulators.nest_kernel import build_info
keep = ("version", "have_mpi", "mpiexec", "threads_model", "host", "hostos", "hostcpu", "built", "prefix")
info = {k: v for k, v in build_info(nest).items() if k in keep}
with open(sys.argv[1], "w") as f:
    json.dump({k: (v if isinstance(v, bool | int | float | str) else str(v)) for k, v in info.items()}, f)
"""


# The file in a checkout's .venv-<name> that puts the cached environment's packages on its path.
LINK_FILE = "_snnbench_environment.pth"
CAPTURE = {"capture_output": True, "text": True, "check": True, "timeout": 300}


class BuildFailed(RuntimeError):
    """The build's environment could not be made; the message names the build and says why."""


def _run(command: list[str], log, what: str, env: dict | None = None) -> None:
    log.write(f"[snnbench] {what}: {' '.join(command)}\n")
    log.flush()
    done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    if done.returncode != 0:
        raise BuildFailed(f"{what} failed (exit code {done.returncode})")


def _build_source(
    build: dict, prefix: Path, log, threads: int, settings: sources.Settings, env: dict | None = None
) -> None:
    """The source tree into the environment by its recipe (builds.recipe), its CMake build folder
    kept in the environment until the compiler is recorded, in `env` (the toolchain's; default this
    process's). A third-party release (e.g. nest-simulator-3.8) is unpacked from its verified archive
    first and removed once installed."""
    env = dict(os.environ) if env is None else env
    named = builds.third_party(build)
    if named:
        archive = _source_archive({"source": named.name}, settings)
        log.write(f"[snnbench] building {named.name} from {archive} (files SHA-256 {named.files_sha256})\n")
        tree = sources.unpack(named, archive, prefix / "archive-source")
        build = {**build, "source": str(tree)}
    if builds.recipe(build) == "wheel":
        _build_wheel(build, prefix, log, threads, env)
    else:
        _cmake_install(build, prefix, log, threads, env)
    if named:
        shutil.rmtree(prefix / "archive-source", ignore_errors=True)


def _cmake_defines(build: dict, env: dict) -> dict[str, str]:
    """The build's CMake options; with MPI, the wrappers the toolchain check found (toolchain.mpi_defines)."""
    wrappers = toolchain.mpi_defines(env) if builds.enabled(build, "with-mpi") else {}
    return {**wrappers, **builds.cmake_options(build)}


def _build_wheel(build: dict, prefix: Path, log, threads: int, env: dict) -> None:
    """A wheel with the CMake options (as snnbench.environments.nest_mpi builds the sdist)."""
    defines = [f"--config-settings=cmake.define.{k}={v}" for k, v in _cmake_defines(build, env).items()]
    wheels = prefix / "wheel"
    command = [*builds.pip(prefix), "wheel", "--no-deps", "--no-build-isolation", *defines]
    command += [f"--config-settings=build-dir={prefix / 'cmake-build'}", "--wheel-dir", str(wheels), build["source"]]
    _run(
        command,
        log,
        "building a wheel from the source tree",
        env=dict(env, CMAKE_BUILD_PARALLEL_LEVEL=str(threads)),
    )
    installed = [*builds.pip(prefix), "install", "--quiet", "--no-deps", *map(str, wheels.glob("*.whl"))]
    _run(installed, log, "installing the wheel", env=env)


def _cmake_install(build: dict, prefix: Path, log, threads: int, base: dict) -> None:
    """CMake's configure, build and install with the environment as the install prefix: PyNEST lands
    in the environment's site-packages (lib/pythonX.Y/site-packages), the kernel in its lib/."""
    folder = prefix / "cmake-build"
    defines = [f"-D{k}={v}" for k, v in _cmake_defines(build, base).items()]
    python = prefix / "bin" / "python"
    configure = ["cmake", "-S", build["source"], "-B", str(folder), f"-DCMAKE_INSTALL_PREFIX={prefix}"]
    configure += ["-Dwith-python=ON", f"-DPython_EXECUTABLE={python}", *defines]
    # The environment's bin/ first: CMake finds its Cython, and NEST's model generator runs `python3`.
    env = dict(base, PATH=f"{prefix / 'bin'}{os.pathsep}{base.get('PATH', '')}")
    _run(configure, log, "configuring the source tree with CMake", env=env)
    _run(["cmake", "--build", str(folder), f"-j{threads}"], log, "compiling the source tree", env=env)
    _run(["cmake", "--install", str(folder)], log, "installing the source tree with CMake", env=env)


def _source_archive(spec: dict, settings: sources.Settings) -> Path:
    try:
        return sources.locate(spec["source"], settings)
    except sources.SourceMissing as error:
        raise BuildFailed(str(error)) from None


def _build_from_source(spec: dict, prefix: Path, log, settings: sources.Settings, threads: int = 1) -> None:
    """The package of a third-party source (envs/<name>.yaml's `# source:` line), built against the
    environment's pins without isolation; its unpacked tree goes once it is installed. A `make`
    source is a tree built in place and kept (prefix/source-tree): its CUDA backend only where
    CUDA_PATH names a toolkit (part of the key), else CPU-only. A `tree` source is kept as it is,
    patched (code a point imports from the folder)."""
    name = spec["source"]
    archive = _source_archive(spec, settings)
    log.write(f"[snnbench] building {name} from {archive} (files SHA-256 {spec['files_sha256']})\n")
    unpacked = prefix / "archive-source"
    tree = sources.unpack(name, archive, unpacked)
    if spec.get("build") in ("make", "tree"):
        kept = tree.rename(prefix / environments.TREE)
        for relative in sources.patch(name, kept):
            log.write(f"[snnbench] patched {relative} (snnbench.environments.sources.SOURCES)\n")
        if spec["build"] == "make":
            env = dict(os.environ)
            if not environments.cuda_toolkit():
                env.pop("CUDA_PATH", None)
            _run(["make", "-C", str(kept), f"-j{threads}"], log, f"building {name} in place", env=env)
        shutil.rmtree(unpacked, ignore_errors=True)
        return
    _run([*builds.pip(prefix), "install", "--no-deps", "--no-build-isolation", str(tree)], log, f"building {name}")
    shutil.rmtree(unpacked, ignore_errors=True)


def compiler(prefix: Path) -> str | None:
    """The C++ compiler of a source build, as CMake found it, with its version line."""
    cache = prefix / "cmake-build" / "CMakeCache.txt"
    if not cache.exists():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_CXX_COMPILER:"):
            path = line.split("=", 1)[1]
            try:
                version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
            except OSError:
                version = ""
            return f"{path}: {version.splitlines()[0] if version else 'version unknown'}"
    return None


def _provenance(build: dict, prefix: Path, started: float, settings: sources.Settings) -> dict:
    python = str(prefix / "bin" / "python")
    version = subprocess.run([python, "-c", "import platform; print(platform.python_version())"], **CAPTURE)
    freeze = subprocess.run([python, "-m", "pip", "freeze"], **CAPTURE).stdout
    info = {
        "key": build["key"],
        "build": {k: v for k, v in build.items() if k not in ("key", "source_state", "requirements")},
        "requirements": build["requirements"],
        "python": version.stdout.strip(),
        "pip_freeze": freeze.split(),
        "pip_freeze_sha256": hashlib.sha256(freeze.encode()).hexdigest()[:16],
        "made_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "make_time_s": round(time.perf_counter() - started, 1),
        "host": platform.node(),
    }
    if "environment" not in build:  # a simulator build: the simulator's own account of itself
        probe = prefix / "simulator.json"
        env = scripts_on_path(dict(os.environ))
        done = subprocess.run([python, "-c", PROBE, str(probe)], capture_output=True, text=True, timeout=300, env=env)
        if done.returncode != 0:  # the import's own last line says why (a missing library, an ABI mismatch)
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise BuildFailed(f"the built simulator does not import: {last}")
        info["simulator"] = json.loads(probe.read_text())
    if build.get("third_party"):
        name = build["third_party"]["source"]
        info["third_party"] = {
            "name": name,
            "url": sources.SOURCES[name].url,
            "archive": str(sources.locate(name, settings, download=False)),
        }
        if (prefix / environments.TREE).is_dir():
            info["source_tree"] = environments.built_tree(prefix / environments.TREE)
    if "source" in build:
        named = builds.third_party(build)
        if named:
            archive = str(sources.locate(named.name, settings, download=False))
            info["source_state"] = {"third_party": named.name, "url": named.url, "archive": archive}
        else:
            info["source_state"] = builds.source_state(build["source"])
        info["cmake"] = builds.cmake_options(build)
        info["recipe"] = builds.recipe(build)
        info["compiler"] = compiler(prefix)
    return info


def find_python(version: str) -> str:
    """An interpreter of Python `version` (e.g. 3.13): python<version> on PATH, else the newest
    of pyenv's versions that runs (a pyenv shim whose version is not active refuses to run)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = [shutil.which(f"python{version}")]
    found += [str(p) for p in sorted((root / "versions").glob(f"{version}*/bin/python{version}"), reverse=True)]
    for candidate in filter(None, found):
        if subprocess.run([candidate, "-c", ""], capture_output=True).returncode == 0:
            return candidate
    raise BuildFailed(f"Python {version} is not installed (needed by envs/<environment>.yaml)")


def _needs(build: dict) -> list[str]:
    """What the build compiles with (snnbench.environments.toolchain.needs): a source build's NEST, with MPI
    where its CMake options ask for it and GSL where they name it; NEST with MPI's, with GSL (its models)."""
    if "source" in build:
        return toolchain.needs(mpi=builds.enabled(build, "with-mpi"), gsl=builds.enabled(build, "with-gsl"))
    return toolchain.needs(mpi=True, gsl=True) if build.get("environment") == builds.MPI_ENVIRONMENT else []


def _script(script: str, prefix: Path) -> list[str]:
    """The command of an environment's install step: a Python file runs in this interpreter (-P: its
    folder not on the path, snnbench is), anything else as itself."""
    path = str(REPO / script)
    return [sys.executable, "-P", path, str(prefix)] if script.endswith(".py") else [path, str(prefix)]


def _install(build: dict, prefix: Path, log, threads: int, settings: sources.Settings) -> dict:
    """Everything into a new environment at prefix: the pins, the no-deps pins, a source tree's
    wheel, the environment's install script, with the toolchain's modules loaded. Returns what the
    toolchain loaded and what each need was found as ({} where the build compiles nothing)."""
    if build.get("third_party"):  # first: a missing source stops the build at its start
        _source_archive(build["third_party"], settings)
    if builds.third_party(build):
        _source_archive({"source": build["source"]}, settings)
    try:
        env, loaded = toolchain.loaded(toolchain.of(build))
        found = toolchain.ensure(_needs(build), env, log)
    except (toolchain.ToolchainMissing, ModulesError) as error:
        raise BuildFailed(str(error)) from None
    if loaded:
        env[nest_mpi.TOOLCHAIN_ID] = loaded["id"]
    interpreter = find_python(build["python"]) if "environment" in build else sys.executable
    _run([interpreter, "-m", "venv", str(prefix)], log, "creating the environment", env=env)
    requirements = build["requirements"]
    if requirements:  # an environment file with no pins is the interpreter alone (pip refuses an empty install)
        _run(
            [*builds.pip(prefix), "install", "--quiet", *requirements],
            log,
            "installing " + " ".join(requirements),
            env=env,
        )
    if build.get("no_deps"):
        _run(
            [*builds.pip(prefix), "install", "--quiet", "--no-deps", *build["no_deps"]], log, "installing without deps"
        )
    if "source" in build:
        _build_source(build, prefix, log, threads, settings, env)
    if build.get("third_party"):
        _build_from_source(build["third_party"], prefix, log, settings, threads)
    if build.get("script"):
        _run(_script(build["script"], prefix), log, f"running {build['script']}", env=scripts_on_path(env))
    return {**loaded, "found": found} if loaded or found else {}


def _named(build: dict, labels: list[str], prefix: Path) -> str:
    """How messages name what is made, e.g. `environment brian2 (envs/brian2.yaml; <cache>/<key>)`."""
    if "environment" in build:
        env = build["environment"]
        return f"environment {env} ({environments.shown(environments.file(env))}; {prefix})"
    return f"build {', '.join(labels)} ({build.get('pip') or build.get('source')}; environment {prefix})"


def make(
    build: dict, labels: list[str], log_path: Path, threads: int = 1, settings: sources.Settings | None = None
) -> dict:
    """Make the environment of `build` (a simulator build, or a named environment's definition,
    each with its key) unless the cache has it; returns its provenance. `settings`: where its
    third-party source is looked for (default: the environment variables')."""
    settings = settings or sources.Settings.of()
    prefix, marker = builds.directory(build), builds.marker(build)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    named = _named(build, labels, prefix)
    with open(log_path, "a") as log, open(prefix.parent / f"{build['key']}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker per key, whichever checkout asks
        if marker.exists():
            log.write(f"[snnbench] {named}: already in the cache\n")
            return json.loads(marker.read_text())
        started = time.perf_counter()
        shutil.rmtree(prefix, ignore_errors=True)  # a half-made environment of an interrupted build
        try:
            made = _install(build, prefix, log, threads, settings)
            info = _provenance(build, prefix, started, settings)
            if made:
                info["toolchain"] = made
            # The compiler is recorded: the CMake build folder (objects, ~300 MB) and the wheel can go.
            for folder in ("cmake-build", "wheel"):
                shutil.rmtree(prefix / folder, ignore_errors=True)
        except (BuildFailed, subprocess.SubprocessError, OSError) as error:
            shutil.rmtree(prefix, ignore_errors=True)
            message = f"{named}: {error}"
            log.write(f"[snnbench] {message}\n")
            raise BuildFailed(message) from None
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(info, indent=1) + "\n")
        os.replace(tmp, marker)
        log.write(f"[snnbench] {named}: made in {info['make_time_s']} s\n")
        return info


def _site_packages(python: Path) -> str:
    return subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], **CAPTURE
    ).stdout.strip()


def link(env: str, log, repo: Path = REPO, env_key: str | None = None) -> Path:
    """This checkout's .venv-<env> on top of the cached environment `env_key` (by default the named
    environment's): a thin environment whose site-packages adds the cached one's (a .pth line run
    by `site`, as for any site directory), with this checkout's snnbench installed editable.
    Returns its marker."""
    env_key = env_key or environments.key(env)
    marker, target = environments.link_marker(env, repo), environments.linked(env, repo)
    if environments.is_linked(env, repo, env_key):
        return marker
    base = environments.cached(env_key) / "bin" / "python"
    shutil.rmtree(target, ignore_errors=True)  # stands on another key, half-made, or a whole venv of old
    try:
        _run([str(base), "-m", "venv", "--without-pip", str(target)], log, f"creating {target}")
        python = target / "bin" / "python"
        Path(_site_packages(python), LINK_FILE).write_text(f"import site; site.addsitedir({_site_packages(base)!r})\n")
        _run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(repo)], log, "installing snnbench")
    except (BuildFailed, subprocess.SubprocessError, OSError) as error:
        shutil.rmtree(target, ignore_errors=True)
        raise BuildFailed(f"environment {env}: linking {target} to {base.parents[1]} failed: {error}") from None
    marker.write_text(env_key + "\n")
    return marker


def named_build(env: str) -> dict:
    """What rule build_environment makes for a named environment: its definition and key."""
    return {**environments.definition(env), "key": environments.key(env)}


def main(argv: list[str] | None = None) -> int:
    """`python -m snnbench.environments.maker ENV...`: what `make env-<name>` runs; the workflow does the same
    through rules build_environment and link_environment."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument(
        "environments", nargs="+", help="names of envs/<name>.yaml ($SNNBENCH_ENVIRONMENTS: more folders)"
    )
    names = parser.parse_args(argv).environments
    found = (p.stem for folder in environments.folders() for p in folder.glob("*.yaml"))
    known = sorted({name for name in found if name not in environments.MAIN})
    unknown = [name for name in names if name not in known]
    if unknown:
        known_list = ", ".join(known)
        print(f"error: no environment {', '.join(unknown)} (envs/<name>.yaml): known are {known_list}", file=sys.stderr)
        return 2
    # Every source first (downloaded once per machine), before any environment is built.
    to_make = [env for env in names if not builds.marker(named_build(env)).exists()]
    try:
        sources.ensure([name for env in to_make if (name := environments.source_name(env))])
    except sources.SourceMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for env in names:
        build = named_build(env)
        log_path = REPO / "logs" / "build" / f"{build['key']}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            if not builds.marker(build).exists():
                print(f"making environment {env} in {builds.directory(build)} (log: {log_path})", flush=True)
            make(build, [], log_path)
            with open(log_path, "a") as log:
                link(env, log)
        except BuildFailed as error:
            print(f"error: {error} (log: {log_path})", file=sys.stderr)
            return 1
        print(f"{environments.linked(env)} -> {builds.directory(build)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
