"""The runs inside a standalone binary (cpp_standalone, Brian2GeNN, Brian2CUDA).

One build serves every seed: the binary reads the seed from a file at start-up. The binary times
itself: C++ inserted into it appends `label <steady-clock seconds>` lines to a marks file (start,
initialised, run_start, presimulated, simulated, end), read back after the run, so presimulation
and simulation are device-side times. The binaries run in their project directory, whose results/
holds both files. Brian2 itself is passed in (`b2`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

MARKS_FILE = "snnbench_marks.txt"
SEED_FILE = "snnbench_seed.txt"


def mark_code(label: str) -> str:
    """C++ that appends `label <steady-clock seconds>` to the marks file."""
    return (
        f'{{ std::ofstream _m("results/{MARKS_FILE}", std::ios::app); _m.precision(17); '
        f'_m << "{label} " << std::chrono::duration<double>('
        "std::chrono::steady_clock::now().time_since_epoch()).count() << std::endl; }"
    )


def seed_code(brian_device: str) -> str:
    """C++ that seeds the binary's generators from the seed file (so one build serves all seeds)."""
    read = f'std::ifstream _s("results/{SEED_FILE}"); unsigned long long _seed = 0; _s >> _seed; '
    if brian_device == "cuda_standalone":
        return "{ " + read + "random_number_buffer.set_seed(_seed); }"
    return (
        "{ " + read + "for (size_t _i = 0; _i < brian::_random_generators.size(); _i++) "
        "brian::_random_generators[_i].seed(_seed + _i); }"
    )


def schedule_runs(b2, network, brian_device: str, t_presim_ms: float, t_sim_ms: float) -> None:
    """The runs, with timer marks. Every run() of a standalone script adds a copy of every code
    object to compile, so cpp_standalone and Brian2GeNN (which allows one run only) do
    presimulation and simulation in one run, with the end of the presimulation marked by a
    host-side operation; Brian2CUDA (whose operations run on the GPU) does two runs."""
    # Not named t_presim: run() looks names up in this frame too, and the timer group has its own.
    presim, sim = t_presim_ms * b2.ms, t_sim_ms * b2.ms
    device = b2.get_device()
    device.insert_code("before_start", mark_code("start"))
    device.insert_code("before_end", mark_code("end"))
    if brian_device in ("cpp_standalone", "cuda_standalone"):
        device.insert_code("main", seed_code(brian_device))
    if brian_device == "cuda_standalone":
        device.insert_code("main", mark_code("initialised") + mark_code("run_start"))
        if t_presim_ms > 0:
            network.run(presim)
        device.insert_code("main", mark_code("presimulated"))
        network.run(sim)
        device.insert_code("main", mark_code("simulated"))
        return
    add_presim_marker(b2, network, t_presim_ms, t_sim_ms)
    if brian_device == "genn":
        device.insert_code("before_network_run", mark_code("initialised") + mark_code("run_start"))
        device.insert_code("after_network_run", mark_code("simulated"))
        network.run(presim + sim)
    else:
        device.insert_code("main", mark_code("initialised") + mark_code("run_start"))
        network.run(presim + sim)
        device.insert_code("main", mark_code("simulated"))


def add_presim_marker(b2, network, t_presim_ms: float, t_sim_ms: float) -> None:
    """A one-neuron group whose run_regularly calls a C++ function at t = t_presim that writes
    the 'presimulated' mark (Brian2GeNN runs such operations on the host between steps)."""
    t_presim = t_presim_ms * b2.ms
    # Argument names of their own: Brian2 substitutes namespace names (t_presim) in the code.
    code = (
        "#include <chrono>\n#include <fstream>\n"
        "double snnbench_mark_presim(double _snnbench_now, double _snnbench_end) {\n"
        "  if (_snnbench_now >= _snnbench_end - 1e-9 && _snnbench_now < _snnbench_end + 1e-9) "
        + mark_code("presimulated")
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
    interval = t_presim_ms * b2.ms if t_presim_ms > 0 else t_sim_ms * b2.ms
    timer.run_regularly(
        "last_mark = snnbench_mark_presim(t, t_presim)",
        dt=interval,
        when="start",
    )
    network.add(timer)


def build(
    b2, network, brian_device: str, build_dir: Path, t_presim_ms: float, t_sim_ms: float
) -> tuple[dict[str, float], Callable[[], None]]:
    """Generate and compile the binary without running it: its timers (codegen, compile, seconds)
    and a call that runs it."""
    schedule = partial(schedule_runs, b2, network, brian_device, t_presim_ms, t_sim_ms)
    if brian_device == "genn":
        return build_genn(b2, schedule)
    schedule()
    start = time.perf_counter()
    b2.device.build(directory=str(build_dir), compile=False, run=False, with_output=False)
    codegen_s = time.perf_counter() - start
    start = time.perf_counter()
    b2.device.compile_source(str(build_dir), b2.prefs.codegen.cpp.compiler, False, False)
    compile_s = time.perf_counter() - start
    return {"codegen": codegen_s, "compile": compile_s}, lambda: b2.device.run(str(build_dir), with_output=False)


def build_genn(b2, schedule: Callable[[], None]) -> tuple[dict[str, float], Callable[[], None]]:
    """Brian2GeNN generates, compiles and runs inside run(): time its compile step, and hold
    the binary's run back (returned, for presimulate)."""
    device = b2.get_device()
    original_compile, original_run = device.compile_source, device.run
    compile_time, deferred = {}, {}

    def timed_compile(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return original_compile(*args, **kwargs)
        finally:
            compile_time["compile"] = time.perf_counter() - t0

    def deferred_run(*args, **kwargs):
        deferred["run"] = partial(original_run, *args, **kwargs)

    device.compile_source, device.run = timed_compile, deferred_run
    start = time.perf_counter()
    try:
        schedule()
    finally:
        device.compile_source, device.run = original_compile, original_run
    total = time.perf_counter() - start
    compile_s = compile_time.get("compile", 0.0)
    if "run" not in deferred:
        raise RuntimeError("Brian2GeNN built the model but never asked to run it")
    return {"compile": compile_s, "codegen": total - compile_s}, deferred["run"]


def reset_results(build_dir: Path, seed: int) -> Path:
    """The build's results folder, without an earlier run's marks and with this point's seed."""
    results = build_dir / "results"
    results.mkdir(exist_ok=True)
    (results / MARKS_FILE).unlink(missing_ok=True)
    (results / SEED_FILE).write_text(f"{seed}\n")
    return results


def read_marks(path: Path) -> dict[str, float]:
    """The marks the binary wrote (the first of each label); an error where one is missing."""
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


def binary_timers(marks: dict[str, float], wall_s: float) -> dict[str, float]:
    """The binary's run in parts (seconds), from its marks and the wall time of the whole run."""
    return {
        "binary_wall": wall_s,
        "binary_init": marks["initialised"] - marks["start"],
        "binary_presimulate": marks["presimulated"] - marks["run_start"],
        "binary_simulate": marks["simulated"] - marks["presimulated"],
        "binary_teardown": marks["end"] - marks["simulated"],
    }
