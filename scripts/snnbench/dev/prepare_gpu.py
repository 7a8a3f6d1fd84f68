"""`make prepare-gpu`: everything a GPU machine without a package index needs for the GPU points, made
here in one command, in ignored folders of this checkout that travel with it (the device tool's
`carry`, 64 MiB in all):

- third_party/: every third-party source (snnbench.environments.sources), located or downloaded and verified;
- gpu-bundle/wheels/: the pins of the GPU environments (envs/<name>.yaml) with their dependencies as
  wheels for the GPU machine's Python (3.12, manylinux x86_64). A pin with no wheel (brian2 2.5.4,
  Brian2GeNN's) is built into one here by the environment's own Python 3.12 (the environment is made
  first where it is missing); gpu-bundle/<env>.txt lists each environment's pins;
- gpu-bundle/prebuilt/genn-5.4.0.tar.gz: PyGeNN's tree compiled here by the pygenn environment's
  Python without its CUDA backend (objects of build/temp.* left out), so that there only the CUDA
  backend is compiled (16 s on 16 cores, against 220 s for the whole build);
- gpu-bundle/debs/: Debian's libffi-dev (PyGeNN's build asks pkg-config for libffi);
- gpu-bundle/specs/: with --experiments, the specs of those experiments' points, as the workflow's
  planner writes them.

There, `python3 -m snnbench.dev.gpu_bundle install` makes the environments from the bundle and
`python3 -m snnbench.dev.gpu_bundle run` runs the points (snnbench.dev.gpu_bundle); here,
`python -m snnbench.results.import_runs` makes their records.

    python -m snnbench.dev.prepare_gpu [--environments pygenn brian2genn] [--experiments FILE...] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from snnbench import environments, planning
from snnbench.environments import maker, sources
from snnbench.paths import REPO

BUNDLE = REPO / "gpu-bundle"
WHEELS = BUNDLE / "wheels"
PREBUILT = BUNDLE / "prebuilt"
DEBS = BUNDLE / "debs"
SPECS = BUNDLE / "specs"
LIMIT_MB = 64.0
# brian2cuda is not bundled: nvidia-curand's wheel alone (~60 MB) is about the whole limit; its pins need
# a machine with a package index (or a call of its own carrying only them).
DEFAULT_ENVIRONMENTS = ("pygenn", "brian2genn")
# What the GPU machine's Python already has (shared/gpu-checks.md: Python 3.12.3 with numpy 2.5.2, 2026-11):
# a pin of the same major version is left to it (numpy 2's ABI holds for the 2.4 that PyGeNN is built with
# here), so that its 16 MiB wheel does not travel; the record names the numpy that ran.
MACHINE_PACKAGES = {"numpy": "2.5.2"}
PYGENN_SOURCE = "genn-5.4.0"
# The GPU machine's interpreter and platform (shared/gpu-checks.md).
TARGET = ["--python-version", "3.12", "--implementation", "cp", "--abi", "cp312"]
# linux_x86_64: a wheel built here (brian2 2.5.4) carries that tag.
PLATFORMS = ["--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64", "--platform", "linux_x86_64"]
PLATFORMS += ["--platform", "any"]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--dest", str(WHEELS)]


def bundled_pins(env: str) -> list[str]:
    """The environment's pins less those the GPU machine's own packages stand for (MACHINE_PACKAGES)."""

    def on_machine(pin: str) -> bool:
        name, version = pin.split("==")
        return name in MACHINE_PACKAGES and MACHINE_PACKAGES[name].split(".")[0] == version.split(".")[0]

    return [pin for pin in environments.pins(env) if not on_machine(pin)]


def wheel_commands(env: str) -> list[list[str]]:
    """pip download commands for an environment's pins as wheels for the GPU machine, with their
    dependencies (wheels already in the bundle, e.g. one built here, count), then its no-deps pins."""
    found = ["--find-links", str(WHEELS)]
    commands = [[*PIP, "--only-binary=:all:", *TARGET, *PLATFORMS, *found, *bundled_pins(env)]]
    if environments.pins(env, no_deps=True):
        commands.append([*PIP, "--only-binary=:all:", *TARGET, *PLATFORMS, "--no-deps", *environments.pins(env, True)])
    return commands


def without_wheel(env: str) -> list[str]:
    """The environment's pins that have no wheel for the GPU machine (each asked for alone)."""
    return [
        pin
        for pin in [*bundled_pins(env), *environments.pins(env, no_deps=True)]
        if subprocess.run([*PIP, "--only-binary=:all:", *TARGET, *PLATFORMS, "--no-deps", pin]).returncode != 0
    ]


def environment_python(env: str) -> str:
    """The environment's interpreter (made and linked first where missing: its Python is the GPU
    machine's, 3.12, so what it builds runs there)."""
    if not environments.is_linked(env) and maker.main([env]) != 0:
        raise SystemExit(f"error: environment {env} could not be made (make env-{env} says why)")
    return environments.python(env)


def build_wheels(env: str, pins: list[str]) -> None:
    """Wheels of pins that PyPI has only as source distributions, built by the environment's own
    Python without isolation (its pins are the build's requirements)."""
    python = environment_python(env)
    for pin in pins:
        command = [python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(WHEELS), pin]
        print(" ".join(command), flush=True)
        if subprocess.run(command).returncode != 0:
            raise SystemExit(f"error: envs/{env}.yaml: {pin} has no wheel for Python 3.12 and did not build into one")


def download(env: str) -> None:
    """The environment's wheels, and gpu-bundle/<env>.txt naming its pins."""
    WHEELS.mkdir(parents=True, exist_ok=True)
    missing = without_wheel(env)
    if missing:
        build_wheels(env, missing)
    for command in wheel_commands(env):
        print(" ".join(command), flush=True)
        if subprocess.run(command).returncode != 0:
            raise SystemExit(f"error: envs/{env}.yaml: pip could not download its wheels for Python 3.12")
    (BUNDLE / f"{env}.txt").write_text("\n".join(bundled_pins(env)) + "\n")
    no_deps = environments.pins(env, no_deps=True)
    (BUNDLE / f"{env}.no-deps.txt").write_text("".join(f"{pin}\n" for pin in no_deps))


def prebuild_pygenn() -> Path:
    """PyGeNN's tree compiled here without its CUDA backend, packed without the objects of build/temp.*."""
    python = environment_python("pygenn")
    archive = sources.locate(PYGENN_SOURCE)
    PREBUILT.mkdir(parents=True, exist_ok=True)
    packed = PREBUILT / f"{PYGENN_SOURCE}.tar.gz"
    with tempfile.TemporaryDirectory() as tmp:
        tree = sources.unpack(PYGENN_SOURCE, archive, Path(tmp))
        env = {k: v for k, v in os.environ.items() if k != "CUDA_PATH"}
        env["MAKEFLAGS"] = f"-j{os.cpu_count() or 1}"
        print(f"compiling PyGeNN in {tree} (no CUDA backend; ~10 min on 2 cores)", flush=True)
        done = subprocess.run([python, "setup.py", "build_ext", "--inplace"], cwd=tree, env=env)
        if done.returncode != 0:
            raise SystemExit(f"error: PyGeNN's build in {tree} failed (exit code {done.returncode})")
        with tarfile.open(packed, "w:gz") as tar:
            tar.add(tree, PYGENN_SOURCE, filter=lambda info: None if "/build/temp." in info.name else info)
    return packed


def libffi_deb() -> list[Path]:
    """Debian's libffi-dev (headers and pkg-config file), or a warning where apt-get is missing."""
    DEBS.mkdir(parents=True, exist_ok=True)
    if shutil.which("apt-get") is None:
        print("warning: no apt-get here: bring Debian's libffi-dev (.deb) into gpu-bundle/debs/", file=sys.stderr)
        return []
    subprocess.run(["apt-get", "download", "-q", "libffi-dev"], cwd=DEBS, check=True)
    return sorted(DEBS.glob("*.deb"))


def specs(experiments: list[str]) -> list[Path]:
    """The specs of the experiments' points as the workflow writes them (the planner's, on top of
    config/config.yaml as --configfile puts them), under gpu-bundle/specs/<point>/spec.json."""
    written = []
    for file in experiments:
        try:
            campaign = planning.plan_files([file])
        except planning.ConfigRefused as error:
            raise SystemExit(f"error: {error}") from None
        for path, spec in campaign.points.items():
            target = SPECS / path / "spec.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(spec, indent=1) + "\n")
            written.append(target)
    return written


def size_mb(paths: list[Path]) -> float:
    return sum(p.stat().st_size for p in paths if p.is_file()) / 2**20


def over_limit(files: list[Path], limit_mb: float = LIMIT_MB) -> str | None:
    """Why the bundle cannot travel (its size and its largest files), or None."""
    total = size_mb(files)
    if total <= limit_mb:
        return None
    largest = sorted(files, key=lambda p: p.stat().st_size, reverse=True)[:5]
    names = ", ".join(f"{p.name} ({p.stat().st_size / 2**20:.1f} MiB)" for p in largest)
    return f"{total:.1f} MiB is more than the {limit_mb:g} MiB that travel with a checkout; largest: {names}"


def contents(files: list[Path]) -> str:
    """What the bundle holds, by folder (gpu-bundle's by its subfolders), with sizes."""
    parts: dict[str, list[Path]] = {}
    for path in files:
        relative = path.relative_to(REPO).parts
        parts.setdefault("/".join(relative[:2] if relative[0] == "gpu-bundle" else relative[:1]), []).append(path)
    return "\n".join(f"  {name}: {len(ps)} file(s), {size_mb(ps):.1f} MiB" for name, ps in sorted(parts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environments", nargs="+", default=list(DEFAULT_ENVIRONMENTS), help="envs/<name>.yaml")
    parser.add_argument("--experiments", nargs="*", default=[], help="experiment files whose specs travel")
    parser.add_argument("--dry-run", action="store_true", help="print the download commands only")
    args = parser.parse_args(argv)
    if args.dry_run:
        for env in args.environments:
            for command in wheel_commands(env):
                print(" ".join(command))
        return 0
    try:
        located = sources.ensure(list(sources.SOURCES))
    except sources.SourceMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    sources.CHECKOUT_FOLDER.mkdir(exist_ok=True)
    for name, path in located.items():
        if path.parent != sources.CHECKOUT_FOLDER:
            shutil.copyfile(path, sources.CHECKOUT_FOLDER / sources.SOURCES[name].file)
    for env in args.environments:
        download(env)
    if "pygenn" in args.environments:
        prebuild_pygenn()
    libffi_deb()
    specs(args.experiments)
    files = [p for folder in (sources.CHECKOUT_FOLDER, BUNDLE) for p in folder.rglob("*") if p.is_file()]
    print(f"{size_mb(files):.1f} MiB to carry (third_party, gpu-bundle):\n{contents(files)}")
    problem = over_limit(files)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
