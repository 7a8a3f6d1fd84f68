"""Brian2's devices as simulator variants: what each needs on the machine (checked before any
work, so a point fails early with the reason), and the preferences that set a standalone device up.
Brian2 itself is passed in (`b2`): it is imported by the backend, inside its timed setup."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from snnbench import environments
from snnbench.machine import gpu


@dataclass(frozen=True)
class Device:
    brian_device: str  # Brian2's device name
    standalone: bool
    gpu: bool
    binned_delays: bool  # one delay per Synapses object (Brian2GeNN)


DEVICES = {
    "brian2-runtime": Device("runtime", standalone=False, gpu=False, binned_delays=False),
    "brian2-cpp": Device("cpp_standalone", standalone=True, gpu=False, binned_delays=False),
    "brian2-genn": Device("genn", standalone=True, gpu=True, binned_delays=True),
    "brian2-genn-cpu": Device("genn", standalone=True, gpu=False, binned_delays=True),
    "brian2-cuda": Device("cuda_standalone", standalone=True, gpu=True, binned_delays=False),
}


class PrerequisiteMissing(RuntimeError):
    """Something the device needs is not on this machine; the message says what."""


def environment_genn() -> Path | None:
    """The GeNN tree the environment's build made (envs/brian2genn.yaml's archive, built in place
    beside the cached environment's site-packages), if this interpreter stands on one."""
    tree = environments.running_source_tree()
    return tree if tree is not None and (tree / "bin" / "genn-buildmodel.sh").exists() else None


def genn_path() -> Path:
    """The GeNN 4.x source tree Brian2GeNN builds with (GENN_PATH, else the environment's own),
    checked before any work."""
    path = os.environ.get("GENN_PATH") or environment_genn()
    if not path:
        raise PrerequisiteMissing(
            "GENN_PATH is not set and this environment has no GeNN build: Brian2GeNN needs a GeNN 4.x "
            "source tree built with `make -j` (envs/brian2genn.yaml builds GeNN 4.9.0 from its source)"
        )
    tree = Path(path)
    if not (tree / "bin" / "genn-buildmodel.sh").exists() or not (tree / "version.txt").exists():
        raise PrerequisiteMissing(f"GENN_PATH={path} is not a GeNN source tree (no bin/genn-buildmodel.sh)")
    version = (tree / "version.txt").read_text().strip()
    if not version.startswith("4."):
        raise PrerequisiteMissing(f"GENN_PATH={path} holds GeNN {version}; Brian2GeNN needs GeNN 4.x")
    if not list((tree / "lib").glob("libgenn_single_threaded_cpu_backend*")):
        raise PrerequisiteMissing(f"GeNN at {path} is not built: run `make -j` in it")
    return tree


def genn_info() -> dict:
    """Which GeNN a Brian2GeNN point built with: its tree, version and the backends it has."""
    info = environments.built_tree(genn_path())
    return {**info, "from": "GENN_PATH" if os.environ.get("GENN_PATH") else "the environment's build"}


def check_prerequisites(simulator: str) -> None:
    """Fail early, with the reason, where a device cannot run on this machine."""
    device = DEVICES[simulator]
    if device.brian_device == "genn":
        tree = genn_path()
        if device.gpu and not list((tree / "lib").glob("libgenn_cuda_backend*")):
            raise PrerequisiteMissing(
                f"GeNN at {tree} has no CUDA backend: the environment was built where CUDA_PATH named no CUDA"
                " toolkit; set CUDA_PATH on a machine with CUDA and the workflow builds one with it"
            )
    if device.gpu and gpu.gpus() is None:
        raise PrerequisiteMissing(f"{simulator} needs a GPU, and nvidia-smi sees none on this machine")
    if device.brian_device == "cuda_standalone" and shutil.which("nvcc") is None and not os.environ.get("CUDA_PATH"):
        raise PrerequisiteMissing("brian2-cuda needs the CUDA toolkit (nvcc on PATH or CUDA_PATH)")


def environment_folders(prefix: str) -> tuple[list[str], list[str]]:
    """The environment's include and library folders for the compiler, where they hold headers or
    libraries (a conda environment's do; a pip virtual environment's hold only Python's own).
    The generated makefile names them and every object depends on the makefile: naming an empty
    folder of one checkout's environment would make another checkout recompile a shared build."""
    include, lib = os.path.join(prefix, "include"), os.path.join(prefix, "lib")
    headers = [name for name in _listing(include) if not name.startswith("python")]
    libraries = [name for name in _listing(lib) if ".so" in name or name.endswith(".a")]
    return ([include] if headers else []), ([lib] if libraries else [])


def _listing(folder: str) -> list[str]:
    return os.listdir(folder) if os.path.isdir(folder) else []


def use_standalone_device(b2, device: Device, build_dir: Path, threads: int, make_jobs: int, options: dict) -> None:
    """Select a standalone device that builds in build_dir, with its compiler preferences, OpenMP
    threads (cpp_standalone only), `make -j<make_jobs>` and the headers the timer marks need."""
    include, lib = environment_folders(os.path.realpath(sys.prefix))
    b2.prefs.codegen.cpp.include_dirs = include
    b2.prefs.codegen.cpp.library_dirs = lib
    b2.prefs.codegen.cpp.runtime_library_dirs = lib
    name = device.brian_device
    kwargs = {"build_on_run": False} if name != "genn" else {}
    if name == "cuda_standalone":
        import brian2cuda  # noqa: F401 (registers the device)

        configure_cuda(b2, build_dir, options.get("cuda_compute_capability"))
    if name == "genn":
        import brian2genn  # noqa: F401 (registers the device)

        b2.prefs.devices.genn.path = str(genn_path())
        if device.gpu:
            # As for PyGeNN (snnbench.network.simulators.genn.common.CUDA_PREFERENCES): device 0 of those
            # the job was given, GeNN's manual block sizes, no optimiser run.
            cuda_prefs = b2.prefs.devices.genn.cuda_backend
            cuda_prefs.device_select, cuda_prefs.manual_device = "MANUAL", 0
            cuda_prefs.blocksize_select_method = "MANUAL"
        # Brian2GeNN builds on run() (build_on_run=False + device.build() fails with it).
        kwargs = {"use_GPU": device.gpu, "directory": str(build_dir), "with_output": False}
    b2.set_device(name, **kwargs)
    b2.prefs.devices.cpp_standalone.openmp_threads = threads if name == "cpp_standalone" else 0
    b2.prefs.devices.cpp_standalone.extra_make_args_unix = [f"-j{make_jobs}"]
    b2.prefs.codegen.cpp.headers = ["<chrono>", "<fstream>"]


def configure_cuda(b2, build_dir: Path, compute_capability: float | str | None) -> None:
    """Brian2CUDA's preferences: the GPU generation to compile for, C++17, and curand."""
    cuda = b2.prefs.devices.cuda_standalone.cuda_backend
    if compute_capability is not None:
        # Compile for this GPU generation without detecting a GPU (no GPU needed to build).
        cuda.detect_gpus = False
        cuda.compute_capability = float(compute_capability)
        cuda.gpu_id = int(os.environ.get("SNNBENCH_CUDA_GPU_ID", "0"))  # brian2cuda needs both
    # brian2cuda's makefile and Brian2's host flags say -std=c++11; CUDA 13's CUB needs C++17 in
    # both the device and the host pass (nvcc takes the last -std it is given).
    nvcc_args = [*cuda.extra_compile_args_nvcc, "-std=c++17"]
    gcc_args = [a for a in b2.prefs.codegen.cpp.extra_compile_args_gcc if not a.startswith("-std=")]
    b2.prefs.codegen.cpp.extra_compile_args_gcc = [*gcc_args, "-std=c++17"]
    curand = curand_from_pypi(build_dir)
    if curand is not None:
        include, link_dir, lib = curand
        nvcc_args.append(f"-I{include}")
        b2.prefs.codegen.cpp.include_dirs += [str(include)]
        b2.prefs.codegen.cpp.library_dirs += [str(link_dir)]
        b2.prefs.codegen.cpp.runtime_library_dirs += [str(lib)]
    cuda.extra_compile_args_nvcc = nvcc_args


def curand_from_pypi(build_dir: Path) -> tuple[Path, Path, Path] | None:
    """curand's headers and library from the PyPI package nvidia-curand (which installs them as
    nvidia/cu<N>/include and lib, the library only as libcurand.so.<major>): the include folder,
    a folder in the build directory where libcurand.so links to it (for -lcurand), and the
    package's lib folder (for the loader, which looks for libcurand.so.<major>); None without it."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in map(Path, spec.submodule_search_locations):
        for header in sorted(root.glob("*/include/curand.h")) + sorted(root.glob("curand/include/curand.h")):
            libs = sorted(header.parent.parent.glob("lib/libcurand.so*"))
            if not libs:
                continue
            link_dir = build_dir / "curand_lib"
            link_dir.mkdir(exist_ok=True)
            link = link_dir / "libcurand.so"
            if not link.exists():
                link.symlink_to(libs[-1])
            return header.parent, link_dir, libs[-1].parent
    return None
