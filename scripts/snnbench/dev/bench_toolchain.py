"""NEST with MPI built through a site's toolchain, once, timed: `make bench-toolchain-build`.

    .venv/bin/python -m snnbench.dev.bench_toolchain [--out DIR]

A module tree in DIR (default ~/.cache/snnbench/toolchain-bench) holds one Lmod module, WRAPPERS, whose
`mpicc` and `mpicxx` record each call and exec the system's: a site's MPI as a module, the way a site
without Debian's packages provides it. With $SNNBENCH_TOOLCHAIN naming it, the nest-mpi environment is made
(snnbench.environments.maker): the toolchain loaded, its needs checked by the tools (no dpkg), NEST's
wheel built into a cache of that toolchain's own. Printed: the make time, CMake's lines about MPI, how
often the wrappers were called. tests/unit/test_toolchain_build.py takes the same tree to the configure
step, and reuses the wheel this makes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

WRAPPERS = "mpi-wrappers/1.0"
# One line per call, then the real wrapper with the same arguments.
WRAPPER = '#!/bin/sh\necho "{name} $*" >> "{log}"\nexec "{real}" "$@"\n'


def wrapper_tree(folder: Path) -> Path:
    """The module tree: folder/modules/WRAPPERS.lua puts folder/bin (mpicc, mpicxx, calls logged to
    folder/calls.log) first on PATH. Returns the modulepath."""
    bin_folder, log = folder / "bin", folder / "calls.log"
    bin_folder.mkdir(parents=True, exist_ok=True)
    for name in ("mpicc", "mpicxx"):
        real = shutil.which(name, path=os.defpath + ":/usr/bin")
        if real is None:
            raise SystemExit(f"no system {name} to wrap (apt-get install libopenmpi-dev)")
        (bin_folder / name).write_text(WRAPPER.format(name=name, log=log, real=real))
        (bin_folder / name).chmod(0o755)
    modulefile = folder / "modules" / f"{WRAPPERS}.lua"
    modulefile.parent.mkdir(parents=True, exist_ok=True)
    modulefile.write_text(
        f'whatis("MPI compiler wrappers that log their calls")\nprepend_path("PATH", "{bin_folder}")\n'
    )
    return folder / "modules"


def calls(folder: Path) -> list[str]:
    log = folder / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "snnbench" / "toolchain-bench")
    out = parser.parse_args(argv).out.absolute()
    modulepath = wrapper_tree(out)
    os.environ.update(SNNBENCH_TOOLCHAIN=WRAPPERS, SNNBENCH_TOOLCHAIN_MODULEPATH=str(modulepath))
    from snnbench.environments import maker, nest_mpi

    build = maker.named_build("nest-mpi")
    log_path = out / f"build-{build['key']}.log"
    started = time.perf_counter()
    try:
        info = maker.make(build, [], log_path, threads=os.cpu_count() or 1)
    except maker.BuildFailed as error:
        print(f"error: {error} (log: {log_path})", file=sys.stderr)
        return 1
    took = time.perf_counter() - started
    # CMake's own lines (FindMPI's, and NEST's summary naming the wrapper it took) from the wheel's build.
    said = ("-- Found MPI", "Use MPI ")
    stripped = (line.strip() for line in log_path.read_text(errors="replace").splitlines())
    lines = [line for line in stripped if line.startswith(said)]
    print("\n".join(lines[-4:]))
    print(f"toolchain: {info.get('toolchain', {}).get('loaded')}; found {info.get('toolchain', {}).get('found')}")
    print(f"wheel cache: {nest_mpi.wheel_folder(dict(os.environ, **{nest_mpi.TOOLCHAIN_ID: info['toolchain']['id']}))}")
    print(f"wrapper calls: {len(calls(out))}; environment {build['key']} made in {info['make_time_s']} s")
    print(f"this call: {took:.0f} s (log: {log_path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
