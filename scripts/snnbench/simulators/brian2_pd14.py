"""PD14 on Brian2: one implementation, four devices (simulator variants).

- `brian2-runtime`: Brian2's runtime device (Python + generated Cython); small scales only.
- `brian2-cpp`: cpp_standalone, OpenMP threads. The build is cached outside the repository and
  reused across seeds (everything seed-dependent is data the binary reads at start-up).
- `brian2-genn` / `brian2-genn-cpu`: Brian2GeNN on the GPU / in GeNN's CPU-only mode. GeNN has one
  delay per Synapses object, so each projection is split by delay bin (`delay_bins`).
- `brian2-cuda`: Brian2CUDA's cuda_standalone device.

The network is PD14 from `snnbench.pd14`, built the way the NEST backend builds it: exponential-
current LIF neurons (the equations below are iaf_psc_exp's), one NeuronGroup per population,
a fixed total number of synapses per projection with sources and targets drawn with replacement,
normal weights and delays redrawn (not clipped) until they have the right sign or reach dt,
optimized initial potentials, and Poisson drive (PoissonInput: K_ext sources at 8 Hz per neuron)
or the equivalent DC. Everything random about the network is drawn here with numpy from the
point's seed, so every device builds the same network for the same seed; only the Poisson drive
comes from the device's own generator.

Phases (the driver times each call; see `phase_split`):
setup = import and device selection; create = groups, inputs, monitors; connect = drawing the
connectivity and creating the Synapses objects; prepare = code generation and compilation
(standalone devices) or generating and compiling the code objects with a zero-length run
(runtime); presimulate / simulate = the two runs. On standalone devices both runs happen inside
the compiled binary, started in `presimulate`; std::chrono timers written into the binary mark
initialisation, presimulation and simulation, and `phase_split` moves the binary's own
initialisation and teardown into `prepare` so that presimulate and simulate are device-side
times. The simulator timers (`timers()`) hold every part separately: codegen, compile, binary
init, presim, sim, teardown and the wall time of the whole binary run.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from snnbench import pd14
from snnbench.provenance import package_versions
from snnbench.simulators.base import Backend, RankOutput

DEFAULT_DELAY_BINS = 4
# Where standalone builds are kept between points (reused across seeds).
CACHE_ENV = "SNNBENCH_BUILD_CACHE"
MARKS_FILE = "snnbench_marks.txt"
SEED_FILE = "snnbench_seed.txt"


# --- The network, drawn with numpy -------------------------------------------------------------


def redraw_normal(rng: np.random.Generator, mean: float, sd: float, n: int, low: float, high: float) -> np.ndarray:
    """n normal values; those outside [low, high] are drawn again until none is (not clipped)."""
    values = rng.normal(mean, sd, n)
    bad = (values < low) | (values > high)
    while bad.any():
        values[bad] = rng.normal(mean, sd, int(bad.sum()))
        bad = (values < low) | (values > high)
    return values


@dataclass
class Projection:
    """The synapses of one projection: source/target indices within their populations, weights
    (pA) and delays in time steps."""

    target: int
    source: int
    i: np.ndarray
    j: np.ndarray
    weight_pA: np.ndarray
    delay_steps: np.ndarray


def draw_projections(net: pd14.Network, seed: int, dt_ms: float = pd14.DT_MS) -> list[Projection]:
    """All recurrent projections of PD14 for one seed: fixed total number, with replacement."""
    rng = np.random.default_rng(seed)
    projections = []
    for t in range(len(pd14.POPULATIONS)):
        for s in range(len(pd14.POPULATIONS)):
            n = int(net.num_synapses[t, s])
            if n == 0:
                continue
            i = rng.integers(0, net.num_neurons[s], n, dtype=np.int32)
            j = rng.integers(0, net.num_neurons[t], n, dtype=np.int32)
            mean_w, sd_w = net.weight_mean_pA[t, s], net.weight_sd_pA[t, s]
            low, high = (0.0, np.inf) if mean_w > 0 else (-np.inf, 0.0)
            weight = redraw_normal(rng, mean_w, sd_w, n, low, high)
            # NEST's bound: delays below dt - dt/2 are redrawn; the rest round to whole steps.
            delay = redraw_normal(rng, net.delay_mean_ms[t, s], net.delay_sd_ms[t, s], n, 0.5 * dt_ms, np.inf)
            steps = np.maximum(np.rint(delay / dt_ms), 1).astype(np.int32)
            projections.append(Projection(t, s, i, j, weight, steps))
    return projections


def initial_potentials(net: pd14.Network, seed: int) -> list[np.ndarray]:
    """Optimized initial membrane potentials (mV), normal per population."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own: independent of the connectivity
    return [rng.normal(pd14.V0_MEAN_MV[p], pd14.V0_SD_MV[p], n) for p, n in enumerate(net.num_neurons)]


@dataclass
class DelayBin:
    """Synapses of one projection that share one delay (Brian2GeNN: one Synapses object)."""

    index: np.ndarray  # positions of the synapses within the projection
    low_steps: int  # the bin holds delays low_steps .. high_steps (inclusive)
    high_steps: int
    delay_steps: int  # the delay all of them get


def delay_bins(delay_steps: np.ndarray, n_bins: int) -> list[DelayBin]:
    """Split synapses by delay into at most n_bins bins of contiguous delays (in time steps).

    Bin edges are quantiles of the delays, so bins hold similar numbers of synapses; a bin's
    delay is the mean delay of its synapses rounded to a step. With at least as many bins as
    distinct delays, every bin holds one delay value and the binning is exact.
    """
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, not {n_bins}")
    delay_steps = np.asarray(delay_steps)
    values, counts = np.unique(delay_steps, return_counts=True)
    if values.size == 0:
        return []
    if values.size <= n_bins:
        groups = [[k] for k in range(values.size)]
    else:
        # Cut the sorted distinct values where the cumulative count crosses each quantile.
        cumulative = np.cumsum(counts) / counts.sum()
        cuts = np.searchsorted(cumulative, np.arange(1, n_bins) / n_bins, side="left") + 1
        edges = np.unique(np.concatenate([[0], np.clip(cuts, 1, values.size - 1), [values.size]]))
        groups = [list(range(a, b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    order = np.argsort(delay_steps, kind="stable")
    sorted_steps = delay_steps[order]
    bins = []
    for group in groups:
        low, high = int(values[group[0]]), int(values[group[-1]])
        a, b = np.searchsorted(sorted_steps, [low, high + 1])
        index = np.sort(order[a:b])
        bins.append(DelayBin(index, low, high, int(np.rint(delay_steps[index].mean()))))
    return bins


# --- Devices ------------------------------------------------------------------------------------


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


def binning_summary(label: str, delay_steps: np.ndarray, bins: list[DelayBin]) -> dict:
    """What delay binning did to one projection, for the point's record."""
    error = sum(np.abs(delay_steps[b.index] - b.delay_steps).sum() for b in bins) / max(delay_steps.size, 1)
    return {
        "projection": label,
        "bins": [
            {"steps": [b.low_steps, b.high_steps], "delay_steps": b.delay_steps, "synapses": len(b.index)} for b in bins
        ],
        "mean_abs_error_steps": float(error),
    }


CODE_OPTIONS = {
    "runtime": (),
    "cpp_standalone": (),
    "genn": ("delay_bins",),
    "cuda_standalone": ("cuda_compute_capability",),
}


class PrerequisiteMissing(RuntimeError):
    """Something the device needs is not on this machine; the message says what."""


def genn_path() -> Path:
    """The GeNN 4.x source tree Brian2GeNN builds with (GENN_PATH), checked before any work."""
    path = os.environ.get("GENN_PATH")
    if not path:
        raise PrerequisiteMissing(
            "GENN_PATH is not set: Brian2GeNN needs a GeNN 4.x source tree built with `make -j` "
            "(e.g. GeNN 4.9.0), with GENN_PATH=<that tree>"
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


def visible_gpu() -> str | None:
    """The first GPU nvidia-smi lists, or None where there is none (or no driver)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in out.stdout.splitlines() if line.startswith("GPU")]
    return lines[0] if out.returncode == 0 and lines else None


def check_prerequisites(simulator: str) -> None:
    """Fail early, with the reason, where a device cannot run on this machine."""
    device = DEVICES[simulator]
    if device.brian_device == "genn":
        tree = genn_path()
        if device.gpu and not list((tree / "lib").glob("libgenn_cuda_backend*")):
            raise PrerequisiteMissing(
                f"GeNN at {tree} has no CUDA backend: build it with CUDA_PATH set (`make -j` in its tree)"
            )
    if device.gpu and visible_gpu() is None:
        raise PrerequisiteMissing(f"{simulator} needs a GPU, and nvidia-smi sees none on this machine")
    if device.brian_device == "cuda_standalone" and shutil.which("nvcc") is None and not os.environ.get("CUDA_PATH"):
        raise PrerequisiteMissing("brian2-cuda needs the CUDA toolkit (nvcc on PATH or CUDA_PATH)")


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


class GpuMemoryPoller:
    """Peak GPU memory in use (nvidia-smi, whole device, MB) while a run lasts."""

    def __init__(self, period_s: float = 0.5):
        self.period_s, self.peak_mb, self._stop = period_s, None, threading.Event()
        self._smi = shutil.which("nvidia-smi")
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                out = subprocess.run(
                    [self._smi, "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                )
                used = float(out.stdout.split()[0])
                self.peak_mb = used if self.peak_mb is None else max(self.peak_mb, used)
            except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
                pass
            self._stop.wait(self.period_s)

    def __enter__(self):
        if self._smi:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._smi:
            self._thread.join()


def build_key(spec: dict, device: Device, versions: dict) -> str:
    """What a standalone build depends on: everything but the seed (the network's random data is
    read by the binary at start-up, not compiled in)."""
    # Numbers as floats: 100 (YAML) and 100.0 (Python) are the same model.
    model = {
        k: float(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in spec["model"].items()
    }
    key = {
        "simulator": spec["simulator"],
        "model": model,
        "threads": spec["resources"]["threads_per_rank"],
        # Options that change the generated code: delay bins make Synapses objects on GeNN only
        # (elsewhere binned delays are data), the compute capability is compiled in.
        "options": {
            k: v for k, v in spec.get("simulator_options", {}).items() if k in CODE_OPTIONS[device.brian_device]
        },
        "versions": versions,
        "python": sys.version,
        # The environment: its path is compiled into the build (include and library folders), so
        # two checkouts sharing the cache must not overwrite each other's builds.
        "environment": os.path.realpath(sys.prefix),
    }
    if device.binned_delays:
        key["seed"] = spec["seed"]  # bin sizes depend on the seed
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def cache_root() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "brian2"
    return Path(os.environ.get(CACHE_ENV, default))


def newest_mtimes(directory: Path) -> dict[str, int]:
    """mtime of every object file and the binary of a build directory."""
    found = {}
    for pattern in ("**/*.o", "main", "main.exe"):
        for f in directory.glob(pattern):
            found[str(f.relative_to(directory))] = f.stat().st_mtime_ns
    return found


class Brian2Backend(Backend):
    """PD14 on one Brian2 device (chosen by the simulator name)."""

    name = "brian2"

    def __init__(self, spec: dict):
        super().__init__(spec)
        self.device = DEVICES[spec["simulator"]]
        self.options = {"delay_bins": DEFAULT_DELAY_BINS, **spec.get("simulator_options", {})}
        # Brian2GeNN must bin delays; the other devices can, to measure what binning changes.
        self.binned = self.device.binned_delays or bool(self.options.get("bin_delays"))
        self._timers: dict[str, float] = {}
        self.info: dict = {}

    # Phases ----------------------------------------------------------------------------------

    def setup(self) -> None:
        check_prerequisites(self.spec["simulator"])
        import brian2  # imported here so that the import is timed as part of setup

        self.b2 = brian2
        self.net = pd14.derive(self.model["neuron_scale"], self.model["indegree_scale"], self.model["input"])
        brian2.prefs.logging.console_log_level = "WARNING"
        brian2.prefs.logging.file_log = False
        brian2.prefs.logging.delete_log_on_exit = True
        self.threads = self.spec["resources"]["threads_per_rank"]
        self.cores = max(1, min(self.spec["resources"]["virtual_processes"], os.cpu_count() or 1))
        dev = self.device.brian_device
        if dev == "runtime":
            brian2.set_device("runtime")
            brian2.seed(self.spec["seed"])
        else:
            self.build_dir, self.lock = self._claim_build_dir()
            # The environment's include/lib folders by their real path: the generated makefile names
            # them, and every object depends on the makefile, so a symlinked or copied environment
            # path would recompile everything.
            prefix = os.path.realpath(sys.prefix)
            brian2.prefs.codegen.cpp.include_dirs = [os.path.join(prefix, "include")]
            brian2.prefs.codegen.cpp.library_dirs = [os.path.join(prefix, "lib")]
            brian2.prefs.codegen.cpp.runtime_library_dirs = [os.path.join(prefix, "lib")]
            kwargs = {"build_on_run": False} if dev != "genn" else {}
            if dev == "cuda_standalone":
                import brian2cuda  # noqa: F401 (registers the device)

                self._configure_cuda()
            if dev == "genn":
                import brian2genn  # noqa: F401 (registers the device)

                brian2.prefs.devices.genn.path = str(genn_path())
                # Brian2GeNN builds on run() (build_on_run=False + device.build() fails with it).
                kwargs = {"use_GPU": self.device.gpu, "directory": str(self.build_dir), "with_output": False}
            brian2.set_device(dev, **kwargs)
            brian2.prefs.devices.cpp_standalone.openmp_threads = self.threads if dev == "cpp_standalone" else 0
            brian2.prefs.devices.cpp_standalone.extra_make_args_unix = [f"-j{self.cores}"]
            brian2.prefs.codegen.cpp.headers = ["<chrono>", "<fstream>"]
        brian2.defaultclock.dt = pd14.DT_MS * brian2.ms

    def create(self) -> None:
        b2, net = self.b2, self.net
        P = pd14.NEURON
        eqs = """
        dv/dt = (E_L - v) / tau_m + (I_syn + I_dc) / C_m : volt (unless refractory)
        dI_syn/dt = -I_syn / tau_syn : amp
        """
        constants = {
            "E_L": P["E_L_mV"] * b2.mV,
            "tau_m": P["tau_m_ms"] * b2.ms,
            "C_m": P["C_m_pF"] * b2.pF,
            "tau_syn": P["tau_syn_ms"] * b2.ms,
            "V_th": P["V_th_mV"] * b2.mV,
            "V_reset": P["V_reset_mV"] * b2.mV,
        }
        v0 = initial_potentials(net, self.spec["seed"])
        self.groups, self.inputs, self.monitors = [], [], []
        for p, name in enumerate(pd14.POPULATIONS):
            group = b2.NeuronGroup(
                int(net.num_neurons[p]),
                eqs,
                threshold="v > V_th",
                reset="v = V_reset",
                refractory=P["t_ref_ms"] * b2.ms,
                method="exact",
                namespace={**constants, "I_dc": net.dc_amp_pA[p] * b2.pA},
                name=f"pop_{name}",
            )
            group.v = v0[p] * b2.mV
            self.groups.append(group)
            if net.input == "poisson" and net.ext_indegree[p] > 0:
                self.inputs.append(
                    b2.PoissonInput(
                        group,
                        "I_syn",
                        N=int(net.ext_indegree[p]),
                        rate=pd14.BG_RATE_HZ * b2.Hz,
                        weight=net.weight_ext_pA * b2.pA,
                    )
                )
            if self.model["record_spikes"]:
                self.monitors.append(b2.SpikeMonitor(group, name=f"spikes_{name}"))

    def connect(self) -> None:
        b2 = self.b2
        self.synapses = []
        self.binning = []
        self.num_synapses = 0
        dt_ms = pd14.DT_MS
        for proj in draw_projections(self.net, self.spec["seed"], dt_ms):
            src, tgt = self.groups[proj.source], self.groups[proj.target]
            label = f"{pd14.POPULATIONS[proj.source]}_to_{pd14.POPULATIONS[proj.target]}"
            delays = proj.delay_steps
            parts = [(slice(None), None)]  # one Synapses object, a delay per synapse
            if self.binned:
                bins = delay_bins(proj.delay_steps, self.options["delay_bins"])
                self.binning.append(binning_summary(label, proj.delay_steps, bins))
                if self.device.binned_delays:  # one Synapses object per bin, with the bin's delay
                    parts = [(b.index, b.delay_steps) for b in bins]
                else:  # the same delays as data: what binning does to the activity, on any device
                    delays = np.empty_like(proj.delay_steps)
                    for b in bins:
                        delays[b.index] = b.delay_steps
            for k, (index, steps) in enumerate(parts):
                kwargs = {"delay": steps * dt_ms * b2.ms} if steps is not None else {}
                syn = b2.Synapses(
                    src,
                    tgt,
                    "w : amp (constant)",
                    on_pre="I_syn_post += w",
                    name=f"syn_{label}" + (f"_d{k}" if steps is not None else ""),
                    **kwargs,
                )
                syn.connect(i=proj.i[index], j=proj.j[index])
                syn.w = proj.weight_pA[index] * b2.pA
                if steps is None:
                    syn.delay = delays * dt_ms * b2.ms
                self.synapses.append(syn)
                self.num_synapses += int(proj.i[index].size)
        self.network = b2.Network(self.groups, self.inputs, self.monitors, self.synapses)

    def prepare(self) -> None:
        b2 = self.b2
        t_presim, t_sim = self.model["t_presim_ms"] * b2.ms, self.model["t_sim_ms"] * b2.ms
        if not self.device.standalone:
            # Generate and compile every code object without advancing time.
            start = time.perf_counter()
            self.network.run(0 * b2.ms)
            self._timers["codegen_and_compile"] = time.perf_counter() - start
            return
        before = newest_mtimes(self.build_dir)
        if self.device.brian_device == "genn":
            self._build_genn(t_presim, t_sim)
        else:
            self._schedule_runs(t_presim, t_sim)
            start = time.perf_counter()
            b2.device.build(directory=str(self.build_dir), compile=False, run=False, with_output=False)
            self._timers["codegen"] = time.perf_counter() - start
            start = time.perf_counter()
            b2.device.compile_source(str(self.build_dir), b2.prefs.codegen.cpp.compiler, False, False)
            self._timers["compile"] = time.perf_counter() - start
        after = newest_mtimes(self.build_dir)
        rebuilt = sorted(k for k, v in after.items() if before.get(k) != v)
        self.info["build"] = {
            "directory": str(self.build_dir),
            "binary_reused": bool(before) and not rebuilt,
            "rebuilt_files": len(rebuilt),
            "make_jobs": self.cores,
        }

    def presimulate(self) -> None:
        b2 = self.b2
        if not self.device.standalone:
            self.network.run(self.model["t_presim_ms"] * b2.ms)
            return
        results = self.build_dir / "results"
        results.mkdir(exist_ok=True)
        (results / MARKS_FILE).unlink(missing_ok=True)
        (results / SEED_FILE).write_text(f"{self.spec['seed']}\n")
        start = time.perf_counter()
        with GpuMemoryPoller() if self.device.gpu else _Nothing() as poller:
            if self.device.brian_device == "genn":
                self._genn_run()
            else:
                b2.device.run(str(self.build_dir), with_output=False)
        wall = time.perf_counter() - start
        if self.device.gpu:
            self.info["gpu_memory_peak_mb"] = poller.peak_mb
        marks = self._read_marks(results / MARKS_FILE)
        self._timers.update(
            {
                "binary_wall": wall,
                "binary_init": marks["initialised"] - marks["start"],
                "binary_presimulate": marks["presimulated"] - marks["run_start"],
                "binary_simulate": marks["simulated"] - marks["presimulated"],
                "binary_teardown": marks["end"] - marks["simulated"],
            }
        )

    def simulate(self) -> None:
        if not self.device.standalone:
            self.network.run(self.model["t_sim_ms"] * self.b2.ms)
            return
        # Everything ran in the binary (see presimulate); reading the results is what is left.
        self._read_spikes()

    # Standalone helpers --------------------------------------------------------------------------

    def _claim_build_dir(self):
        key = build_key(self.spec, self.device, package_versions(("brian2", "brian2genn", "brian2cuda")))
        directory = cache_root() / f"{self.spec['simulator']}-{key}"
        directory.mkdir(parents=True, exist_ok=True)
        # Points with the same build run one at a time: the data files of one seed must not be
        # overwritten by another's while its binary runs.
        lock = open(directory / ".lock", "w")  # noqa: SIM115 (held until the process exits)
        fcntl.flock(lock, fcntl.LOCK_EX)
        return directory, lock

    def _configure_cuda(self) -> None:
        b2 = self.b2
        cuda = b2.prefs.devices.cuda_standalone.cuda_backend
        capability = self.options.get("cuda_compute_capability")
        if capability is not None:
            # Compile for this GPU generation without detecting a GPU (no GPU needed to build).
            cuda.detect_gpus = False
            cuda.compute_capability = float(capability)
            cuda.gpu_id = int(os.environ.get("SNNBENCH_CUDA_GPU_ID", "0"))  # brian2cuda needs both
        # brian2cuda's makefile and Brian2's host flags say -std=c++11; CUDA 13's CUB needs C++17 in
        # both the device and the host pass (nvcc takes the last -std it is given).
        nvcc_args = [*cuda.extra_compile_args_nvcc, "-std=c++17"]
        gcc_args = [a for a in b2.prefs.codegen.cpp.extra_compile_args_gcc if not a.startswith("-std=")]
        b2.prefs.codegen.cpp.extra_compile_args_gcc = [*gcc_args, "-std=c++17"]
        curand = curand_from_pypi(self.build_dir)
        if curand is not None:
            include, link_dir, lib = curand
            nvcc_args.append(f"-I{include}")
            b2.prefs.codegen.cpp.include_dirs += [str(include)]
            b2.prefs.codegen.cpp.library_dirs += [str(link_dir)]
            b2.prefs.codegen.cpp.runtime_library_dirs += [str(lib)]
        cuda.extra_compile_args_nvcc = nvcc_args

    @staticmethod
    def _mark(label: str) -> str:
        """C++ that appends `label <steady-clock seconds>` to the marks file (the binaries run in
        their project directory, whose results/ holds the marks)."""
        return (
            f'{{ std::ofstream _m("results/{MARKS_FILE}", std::ios::app); _m.precision(17); '
            f'_m << "{label} " << std::chrono::duration<double>('
            "std::chrono::steady_clock::now().time_since_epoch()).count() << std::endl; }"
        )

    @staticmethod
    def _seed_code(brian_device: str) -> str:
        """C++ that seeds the binary's generators from the seed file (so one build serves all seeds)."""
        read = f'std::ifstream _s("results/{SEED_FILE}"); unsigned long long _seed = 0; _s >> _seed; '
        if brian_device == "cuda_standalone":
            return "{ " + read + "random_number_buffer.set_seed(_seed); }"
        return (
            "{ " + read + "for (size_t _i = 0; _i < brian::_random_generators.size(); _i++) "
            "brian::_random_generators[_i].seed(_seed + _i); }"
        )

    def _schedule_runs(self, t_presim, t_sim) -> None:
        """The runs, with timer marks. Every run() of a standalone script adds a copy of every
        code object to compile, so cpp_standalone and Brian2GeNN (which allows one run only) do
        presimulation and simulation in one run, with the end of the presimulation marked by a
        host-side operation; Brian2CUDA (whose operations run on the GPU) does two runs."""
        b2, dev = self.b2, self.device
        device = b2.get_device()
        device.insert_code("before_start", self._mark("start"))
        device.insert_code("before_end", self._mark("end"))
        if dev.brian_device in ("cpp_standalone", "cuda_standalone"):
            device.insert_code("main", self._seed_code(dev.brian_device))
        if dev.brian_device == "cuda_standalone":
            device.insert_code("main", self._mark("initialised") + self._mark("run_start"))
            if self.model["t_presim_ms"] > 0:
                self.network.run(t_presim)
            device.insert_code("main", self._mark("presimulated"))
            self.network.run(t_sim)
            device.insert_code("main", self._mark("simulated"))
            return
        self._add_presim_marker(t_presim)
        if dev.brian_device == "genn":
            device.insert_code("before_network_run", self._mark("initialised") + self._mark("run_start"))
            device.insert_code("after_network_run", self._mark("simulated"))
            self.network.run(t_presim + t_sim)
        else:
            device.insert_code("main", self._mark("initialised") + self._mark("run_start"))
            self.network.run(t_presim + t_sim)
            device.insert_code("main", self._mark("simulated"))

    def _add_presim_marker(self, t_presim) -> None:
        """A one-neuron group whose run_regularly calls a C++ function at t = t_presim that writes
        the 'presimulated' mark (Brian2GeNN runs such operations on the host between steps)."""
        b2 = self.b2
        # Argument names of their own: Brian2 substitutes namespace names (t_presim) in the code.
        code = (
            "#include <chrono>\n#include <fstream>\n"
            "double snnbench_mark_presim(double _snnbench_now, double _snnbench_end) {\n"
            "  if (_snnbench_now >= _snnbench_end - 1e-9 && _snnbench_now < _snnbench_end + 1e-9) "
            + self._mark("presimulated")
            + "\n  return _snnbench_now;\n}\n"
        )
        mark = b2.Function(
            lambda t, t_presim: t,
            arg_units=[b2.second, b2.second],
            return_unit=b2.second,
            stateless=False,
        )
        mark.implementations.add_implementation("cpp", code, name="snnbench_mark_presim")
        timer = b2.NeuronGroup(
            1,
            "last_mark : second",
            name="snnbench_timer",
            namespace={"snnbench_mark_presim": mark, "t_presim": t_presim},
        )
        interval = (
            self.model["t_presim_ms"] * b2.ms if self.model["t_presim_ms"] > 0 else self.model["t_sim_ms"] * b2.ms
        )
        timer.run_regularly(
            "last_mark = snnbench_mark_presim(t, t_presim)",
            dt=interval,
            when="start",
        )
        self.network.add(timer)

    def _build_genn(self, t_presim, t_sim) -> None:
        """Brian2GeNN generates, compiles and runs inside run(): time its compile step, and hold
        the binary's run back until presimulate."""
        device = self.b2.get_device()
        original_compile, original_run = device.compile_source, device.run
        compile_time = {}

        def timed_compile(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original_compile(*args, **kwargs)
            finally:
                compile_time["compile"] = time.perf_counter() - t0

        def deferred_run(*args, **kwargs):
            self._genn_run = lambda: original_run(*args, **kwargs)

        device.compile_source, device.run = timed_compile, deferred_run
        start = time.perf_counter()
        try:
            self._schedule_runs(t_presim, t_sim)
        finally:
            device.compile_source, device.run = original_compile, original_run
        total = time.perf_counter() - start
        self._timers["compile"] = compile_time.get("compile", 0.0)
        self._timers["codegen"] = total - self._timers["compile"]

    @staticmethod
    def _read_marks(path: Path) -> dict[str, float]:
        marks = {}
        if path.exists():
            for line in path.read_text().splitlines():
                label, value = line.split()
                marks.setdefault(label, float(value))
        needed = ("start", "initialised", "run_start", "simulated", "end")
        if any(k not in marks for k in needed):
            raise RuntimeError(f"the binary wrote incomplete timer marks to {path}: {sorted(marks)}")
        marks.setdefault("presimulated", marks["run_start"])
        return marks

    def _read_spikes(self) -> None:
        self._spikes = [(np.asarray(m.i[:]), np.asarray(m.t[:] / self.b2.ms)) for m in self.monitors]

    # Results ---------------------------------------------------------------------------------

    def timers(self) -> dict[str, float]:
        return dict(self._timers)

    def phase_split(self, phases_s: dict[str, float]) -> dict[str, float]:
        """On standalone devices the binary runs in the presimulate call: keep its device-side
        presimulation and simulation times there, and move the rest of the binary's run (start,
        initialisation, teardown, result files) into prepare. The sum stays the wall time."""
        if not self.device.standalone or "binary_wall" not in self._timers:
            return phases_s
        t = self._timers
        phases = dict(phases_s)
        binary_other = phases["presimulate"] - t["binary_presimulate"] - t["binary_simulate"]
        phases["prepare"] += binary_other
        phases["presimulate"] = t["binary_presimulate"]
        phases["simulate"] += t["binary_simulate"]  # plus reading the results
        return phases

    def output(self) -> RankOutput:
        if not self.device.standalone:
            self._read_spikes()
        first_ids = np.concatenate([[0], np.cumsum(self.net.num_neurons)[:-1]]).astype(int)
        t_presim = self.model["t_presim_ms"]
        senders, times = [], []
        for p, (i, t) in enumerate(getattr(self, "_spikes", [])):
            keep = t >= t_presim - 1e-9  # the measured window only (Brian2GeNN records from t = 0)
            senders.append(i[keep].astype(np.int64) + first_ids[p])
            times.append(t[keep])
        created = self._synapses_created()
        info = {
            "device": self.device.brian_device,
            "gpu": self.device.gpu,
            "threads": self.threads if self.device.brian_device == "cpp_standalone" else 1,
            "synapse_objects": len(self.synapses),
            "delays": "binned" if self.binned else "per synapse",
            "phase_sources": self._phase_sources(),
            # The child's own environment (the record's provenance describes the parent's).
            "environment": {
                "python": sys.version.split()[0],
                "executable": sys.executable,
                "packages": package_versions(("brian2", "brian2genn", "brian2cuda", "numpy", "cython")),
            },
            **self.info,
        }
        if self.binned:
            info["delay_bins"] = self.options["delay_bins"]
            info["delay_binning"] = self.binning
        return RankOutput(
            rank=0,
            num_ranks=1,
            threads=info["threads"],
            local_synapses=created,
            population_first_ids=first_ids.tolist(),
            spike_senders=np.concatenate(senders) if senders else np.zeros(0, dtype=np.int64),
            spike_times_ms=np.concatenate(times) if times else np.zeros(0),
            simulator_version=self.b2.__version__,
            simulator_info=info,
        )

    def _synapses_created(self) -> int:
        """Synapses the simulator holds (read back from it), else the number handed to it."""
        try:
            return int(sum(int(np.asarray(s.N[:]).ravel()[0]) for s in self.synapses))
        except Exception:  # noqa: BLE001 (not every device can read N back; say what was created)
            self.info["num_synapses_source"] = "created (not read back from the device)"
            return self.num_synapses

    def _phase_sources(self) -> dict[str, str]:
        if not self.device.standalone:
            return {
                "prepare": "wall clock: Network.run(0 ms) (code generation and Cython compilation)",
                "presimulate": "wall clock: Network.run(t_presim)",
                "simulate": "wall clock: Network.run(t_sim)",
            }
        return {
            "prepare": "wall clock: code generation and compilation, plus the binary's start, initialisation "
            "and teardown (binary run minus its device-side presimulate and simulate)",
            "presimulate": "device-side std::chrono timer in the binary",
            "simulate": "device-side std::chrono timer in the binary, plus reading the spike files (wall clock)",
        }


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
