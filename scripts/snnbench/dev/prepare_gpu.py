"""What a GPU machine without a package index needs for `make bench-gpu`, put into ignored folders
of this checkout that travel with it (the device tool's `carry`, 64 MiB in all):

- third_party/: the GeNN source archives (genn-5.4.0.tar.gz for envs/pygenn.yaml, genn-4.9.0.tar.gz
  for Brian2GeNN's GENN_PATH), copied from $SNNBENCH_THIRD_PARTY (or ../shared/third_party) and
  checked against its SHA256SUMS;
- gpu-bundle/wheels/: the pinned packages of the named environments (envs/<name>.yaml) for the GPU
  machine's Python (3.12, manylinux x86_64), with their dependencies, as wheels. Pins that have no
  wheel (brian2 2.5.4, Brian2GeNN's) are named in a warning: their source distributions must be brought
  by hand (pip would have to build their metadata here to download them).

`make bench-gpu` on the GPU machine finds gpu-bundle/wheels and lets pip install from it alone
(PIP_NO_INDEX, PIP_FIND_LINKS). The workflow's own .venv and the training environments (torch) do
not fit into 64 MiB: they must already be there.

    python -m snnbench.dev.prepare_gpu [--environments pygenn brian2genn brian2cuda] [--dry-run]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from snnbench import environments, hashing, third_party
from snnbench.paths import REPO

BUNDLE = REPO / "gpu-bundle"
WHEELS = BUNDLE / "wheels"
LIMIT_MB = 64.0
DEFAULT_ENVIRONMENTS = ("pygenn", "brian2genn", "brian2cuda")
# The GPU machine's interpreter and platform (shared/gpu-checks.md).
TARGET = ["--python-version", "3.12", "--implementation", "cp", "--abi", "cp312"]
PLATFORMS = ["--platform", "manylinux_2_17_x86_64", "--platform", "manylinux_2_28_x86_64", "--platform", "any"]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "download", "--dest", str(WHEELS)]


def wheel_commands(env: str) -> list[list[str]]:
    """pip download commands for an environment's pins as wheels for the GPU machine, with their
    dependencies, then its no-deps pins."""
    commands = [[*PIP, "--only-binary=:all:", *TARGET, *PLATFORMS, *environments.pins(env)]]
    if environments.pins(env, no_deps=True):
        commands.append([*PIP, "--no-deps", *environments.pins(env, no_deps=True)])
    return commands


def archives(source: Path) -> dict[str, str]:
    """The archives SHA256SUMS lists in `source`: file name -> SHA-256."""
    sums = source / "SHA256SUMS"
    if not sums.exists():
        raise SystemExit(f"error: {sums} is missing: set ${third_party.FOLDER_ENV} to the folder of the GeNN archives")
    return {
        name.strip(): digest
        for digest, name in (line.split(maxsplit=1) for line in sums.read_text().splitlines() if line.strip())
    }


def copy_archives(source: Path, dry_run: bool) -> list[Path]:
    """The archives of `source`, checked against its SHA256SUMS, in the checkout's third_party/."""
    copied = []
    for name, digest in archives(source).items():
        target = third_party.DEFAULT_FOLDER / name
        print(f"{source / name} -> {target}")
        if dry_run:
            continue
        found = hashing.file_sha256(source / name)
        if found != digest:
            raise SystemExit(f"error: {source / name}: SHA-256 {found}, but {source / 'SHA256SUMS'} says {digest}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if (source / name).resolve() != target.resolve():
            shutil.copyfile(source / name, target)
        copied.append(target)
    return copied


def download(env: str, dry_run: bool) -> list[str]:
    """The environment's wheels; returns its pins that have no wheel for the GPU machine."""
    missing = []
    for command in wheel_commands(env):
        print(" ".join(command))
        if dry_run or subprocess.run(command).returncode == 0:
            continue
        # Some pin has no wheel for the target: each pin on its own, with its dependencies where they all
        # have wheels, else alone. (Source distributions are not fetched: pip would build their metadata here.)
        for pin in [*environments.pins(env), *environments.pins(env, no_deps=True)]:
            wheel = [*PIP, "--only-binary=:all:", *TARGET, *PLATFORMS, pin]
            if subprocess.run(wheel).returncode != 0 and subprocess.run([*wheel, "--no-deps"]).returncode != 0:
                missing.append(pin)
    return missing


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--environments", nargs="+", default=list(DEFAULT_ENVIRONMENTS), help="envs/<name>.yaml")
    parser.add_argument("--source", default=None, help="folder of the GeNN archives (default: $SNNBENCH_THIRD_PARTY)")
    parser.add_argument("--dry-run", action="store_true", help="print what would be copied and downloaded")
    args = parser.parse_args(argv)
    source = Path(args.source) if args.source else third_party.folder()
    archive_files = copy_archives(source, args.dry_run)
    missing = {env: pins for env in args.environments if (pins := download(env, args.dry_run))}
    if args.dry_run:
        return 0
    for env, pins in missing.items():
        print(
            f"warning: envs/{env}.yaml: no wheel for Python 3.12 of {', '.join(pins)} (nor, then, of the "
            "dependencies of pins that need them): bring their source distributions by hand",
            file=sys.stderr,
        )
    files = [*archive_files, *WHEELS.glob("*")]
    problem = over_limit(files)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    print(f"{size_mb(files):.1f} MiB in third_party/ and {WHEELS.relative_to(REPO)}/: carry both to the GPU machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
