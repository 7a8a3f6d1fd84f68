"""On a GPU machine without a package index, from the checkout's root, with what `make prepare-gpu`
put into gpu-bundle/ and third_party/ (snnbench.dev.prepare_gpu). Python's standard library and
the checkout's snnbench alone (PYTHONPATH=scripts); nothing is downloaded.

    PYTHONPATH=scripts python3 -m snnbench.dev.gpu_bundle install   # the environments, once per machine
    PYTHONPATH=scripts python3 -m snnbench.dev.gpu_bundle run [--only TEXT] [--runs DIR]

install: each environment's packages into gpu-bundle/site/<env> from the bundle's wheels (pip
--no-index --target); Debian's libffi-dev unpacked for PyGeNN's build; PyGeNN's tree, compiled on
the preparing machine, completed with its CUDA backend where CUDA_PATH (default: nvcc's toolkit)
names one, then installed; GeNN 4.9.0 for Brian2GeNN unpacked, patched and built with make.

run: every spec under gpu-bundle/specs, one after another, as the workflow's execute rule would run
its child: `python -m snnbench.network.run <spec> <runs>/<point>` in the point's environment,
its output in log.txt and its exit status in exit_status. Start it detached (`setsid nohup ... &`)
where one call of the machine is shorter than the runs; back here, `python -m snnbench.results.import_runs
<runs>` writes the records.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from snnbench.environments import sources
from snnbench.paths import REPO

BUNDLE = REPO / "gpu-bundle"
WHEELS, SPECS, SITE = BUNDLE / "wheels", BUNDLE / "specs", BUNDLE / "site"
PYGENN_SOURCE, GENN_4_SOURCE = "genn-5.4.0", "genn-4.9.0"
PIP = [sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-compile", "--disable-pip-version-check"]


def cuda_path() -> str | None:
    """$CUDA_PATH, else the toolkit of the nvcc on PATH."""
    nvcc = shutil.which("nvcc")
    return os.environ.get("CUDA_PATH") or (str(Path(nvcc).resolve().parents[1]) if nvcc else None)


def build_environ(env: str) -> dict:
    """The variables a build or a point of `env` runs with: its packages and snnbench on the path,
    libffi's headers and pkg-config file, the CUDA toolkit."""
    root = BUNDLE / "root"
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SITE / env), str(REPO / "scripts")]))
    environ["PKG_CONFIG_PATH"] = str(root / "usr/lib/x86_64-linux-gnu/pkgconfig")
    environ["CPATH"] = os.pathsep.join([str(root / "usr/include"), str(root / "usr/include/x86_64-linux-gnu")])
    environ["LIBRARY_PATH"] = str(BUNDLE / "lib")
    if cuda_path():
        environ["CUDA_PATH"] = cuda_path()
    if env == "brian2genn":
        environ["GENN_PATH"] = str(BUNDLE / GENN_4_SOURCE)
    return environ


def run(command: list[str], what: str, **kwargs) -> None:
    print(f"[gpu-bundle] {what}: {' '.join(command)}", flush=True)
    done = subprocess.run(command, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"error: {what} failed (exit code {done.returncode})")


def install_libffi() -> None:
    """Debian's libffi-dev unpacked into gpu-bundle/root, and a libffi.so the linker finds."""
    for deb in sorted((BUNDLE / "debs").glob("*.deb")):
        run(["dpkg", "-x", str(deb), str(BUNDLE / "root")], f"unpacking {deb.name}")
    machine_libffi = sorted(Path("/usr/lib/x86_64-linux-gnu").glob("libffi.so.*"))
    if machine_libffi:
        (BUNDLE / "lib").mkdir(exist_ok=True)
        link = BUNDLE / "lib" / "libffi.so"
        link.unlink(missing_ok=True)
        link.symlink_to(machine_libffi[0])


def install_packages(env: str) -> None:
    target = ["--target", str(SITE / env), "--find-links", str(WHEELS)]
    run([*PIP, *target, "-r", str(BUNDLE / f"{env}.txt")], f"installing {env}'s packages")
    no_deps = BUNDLE / f"{env}.no-deps.txt"
    if no_deps.exists() and no_deps.read_text().strip():
        run([*PIP, *target, "--no-deps", "-r", str(no_deps)], f"installing {env}'s packages without dependencies")


def install_pygenn() -> None:
    """The prebuilt tree: only what changed is compiled (the CUDA backend where CUDA_PATH is set)."""
    with tarfile.open(BUNDLE / "prebuilt" / f"{PYGENN_SOURCE}.tar.gz") as tar:
        tar.extractall(BUNDLE / "build", filter="data")
    tree, environ = BUNDLE / "build" / PYGENN_SOURCE, build_environ("pygenn")
    environ["MAKEFLAGS"] = f"-j{os.cpu_count() or 1}"
    run([sys.executable, "setup.py", "build_ext", "--inplace"], "completing PyGeNN's build", cwd=tree, env=environ)
    command = [*PIP, "--no-deps", "--no-build-isolation", "--target", str(SITE / "pygenn"), "--upgrade", str(tree)]
    run(command, "installing PyGeNN", env=environ)


def install_genn_4() -> None:
    """GeNN 4.9.0 for Brian2GeNN (GENN_PATH), as envs/brian2genn.yaml's build makes it."""
    shutil.rmtree(BUNDLE / GENN_4_SOURCE, ignore_errors=True)
    tree = sources.unpack(GENN_4_SOURCE, sources.locate(GENN_4_SOURCE, download=False), BUNDLE)
    sources.patch(GENN_4_SOURCE, tree)
    environ = build_environ("brian2genn")
    run(["make", "-C", str(tree), f"-j{os.cpu_count() or 1}"], "building GeNN 4.9.0", env=environ)


def install() -> None:
    install_libffi()
    # gpu-bundle/<env>.txt lists an environment's pins (prepare_gpu); other .txt files there are no environment.
    environments = sorted(p.stem for p in BUNDLE.glob("*.txt") if (REPO / "envs" / f"{p.stem}.yaml").is_file())
    for env in environments:
        install_packages(env)
    if "pygenn" in environments:
        install_pygenn()
    if "brian2genn" in environments:
        install_genn_4()


def run_points(runs: Path, only: str | None) -> list[str]:
    """Each spec's point in its environment; a line per point saying how it ended."""
    from snnbench.network.simulators import environment_for

    lines = []
    for spec_path in sorted(SPECS.rglob("spec.json")):
        point = spec_path.parent.relative_to(SPECS)
        if only and only not in str(point):
            continue
        spec = json.loads(spec_path.read_text())
        outdir = runs / point
        outdir.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "snnbench.network.run", str(spec_path), str(outdir)]
        environ = build_environ(environment_for(spec))
        with open(outdir / "log.txt", "w") as log:
            code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=environ)
        (outdir / "exit_status").write_text(f"{code.returncode}\n")
        lines.append(f"{point}: exit status {code.returncode}")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="the environments from the bundle")
    run_command = commands.add_parser("run", help="the points of gpu-bundle/specs")
    run_command.add_argument("--only", help="only points whose path holds this text")
    run_command.add_argument("--runs", type=Path, default=BUNDLE / "runs", help="where the runs go")
    args = parser.parse_args(argv)
    if args.command == "install":
        install()
    else:
        run_points(args.runs, args.only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
