"""NEST (PyNEST): the builders of the network models on NEST, threads and MPI ranks."""

from __future__ import annotations

# What build_info names, and NEST before 3.9 keeps in SLI's statusdict (`threading` there).
STATUS_KEYS = {"have_mpi": "have_mpi", "threads_model": "threading", "built": "built", "prefix": "prefix"}
STATUS_KEYS |= {"hostos": "hostos", "hostcpu": "hostcpu", "mpiexec": "mpiexec"}


def build_info(nest) -> dict:
    """NEST's account of its build: the kernel's `build_info` (NEST 3.9 on), else its version and SLI's
    statusdict (the release trees before, built by the builds axis)."""
    try:
        return nest.GetKernelStatus("build_info")
    except KeyError:
        pass
    info = {"version": str(nest.__version__).removeprefix("NEST").strip().removeprefix("nest-")}
    for key, name in STATUS_KEYS.items():
        try:
            info[key] = nest.ll_api.sli_func(f"statusdict /{name} get")
        except Exception:  # noqa: BLE001 (a key this release's statusdict does not have: left out)
            continue
    return info
