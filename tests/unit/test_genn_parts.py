"""PyGeNN's pure parts: the spike recording buffer's order, delays in GeNN's steps, the build key,
the genn points' specs, and the source archive an environment is built from (envs/pygenn.yaml).
tests/e2e/test_genn.py runs PD14 on GeNN's CPU backend through the workflow."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import config_problems, experiment, validated
from snnbench import environments, planning
from snnbench.network import simulators
from snnbench.network.models import pd14
from snnbench.network.simulators import environment_for
from snnbench.network.simulators.genn import common as genn
from snnbench.network.simulators.genn.pd14 import GennBackend


@pytest.mark.parametrize(("presim", "sim"), [(0, 50), (30, 50), (50, 50), (120, 50), (7, 13)])
def test_the_recording_buffer_is_read_in_time_order(presim, sim):
    # GeNN writes step s into slot s % sim and labels slot k as step presim + k.
    true_steps = np.arange(presim, presim + sim)
    slots = true_steps % sim
    labelled = presim + slots
    assert np.array_equal(genn.spike_steps(labelled, presim, sim), true_steps)


def test_delays_in_steps_and_the_delay_buffer():
    params = genn.delay_params(1.5, 0.75)
    assert params["meanSteps"] == pytest.approx(15.0) and params["sdSteps"] == pytest.approx(7.5)
    assert params["minSteps"] == 0.5  # NEST redraws delays below dt/2
    assert params["maxSteps"] == pytest.approx((1.5 + genn.DELAY_BOUND_SD * 0.75) / pd14.DT_MS)
    net = pd14.derive(0.1, 0.1)
    # The projections GennBackend.connect draws PD14 from (its one input, the derived network).
    slots = genn.delay_slots(GennBackend.projections(SimpleNamespace(net=net)), pd14.DT_MS)
    # The longest drawable delay fits the buffer: slots hold delays 0 .. rint(max).
    longest = max(
        genn.delay_params(m, s)["maxSteps"] for m, s in zip(net.delay_mean_ms.flat, net.delay_sd_ms.flat, strict=True)
    )
    assert slots == round(longest) + 1


def test_the_build_key_follows_what_the_generated_code_depends_on():
    spec = planning.expand_points(validated(experiment(simulators=["genn-cpu"]))["experiments"][0])[0]
    key = genn.build_key(spec, "/env")
    assert genn.build_key({**spec, "seed": spec["seed"] + 1}, "/env") != key  # the seed is compiled in
    procedural = {**spec, "simulator_options": {"procedural_connectivity": True}}
    assert genn.build_key(procedural, "/env") != key
    assert genn.build_key(spec, "/other-env") != key
    # 100 (YAML) and 100.0 (Python) are the same model.
    as_int = {**spec, "model": {**spec["model"], "t_sim_ms": 100}}
    assert genn.build_key(as_int, "/env") == genn.build_key(
        {**spec, "model": {**spec["model"], "t_sim_ms": 100.0}}, "/env"
    )


def test_genn_points_get_their_options_gpus_and_environment():
    exp = experiment(simulators=["nest", "genn", "genn-cpu"])
    specs = {s["simulator"]: s for s in planning.expand_points(validated(exp)["experiments"][0])}
    assert specs["genn"]["resources"]["gpus"] == 1 and "gpus" not in specs["genn-cpu"]["resources"]
    procedural = validated(experiment(simulators=["genn"], genn={"procedural_connectivity": True}))
    assert planning.expand_points(procedural["experiments"][0])[0]["simulator_options"] == {
        "procedural_connectivity": True
    }
    assert "simulator_options" not in specs["nest"]
    assert environment_for(specs["genn"]) == environment_for(specs["genn-cpu"]) == "pygenn"
    defaults = validated(experiment(simulators=["genn-cpu"]))["experiments"][0]
    assert planning.expand_points(defaults)[0]["simulator_options"] == {"procedural_connectivity": False}
    genn_backend = "snnbench.network.simulators.genn.pd14:GennBackend"
    assert simulators.builder("genn", "pd14") == simulators.builder("genn-cpu", "pd14") == genn_backend


def test_procedural_connectivity_on_the_cpu_backend_is_refused_before_any_job():
    refused = config_problems(experiment(simulators=["genn", "genn-cpu"], genn={"procedural_connectivity": True}))
    assert any("(unit): genn.procedural_connectivity needs GeNN's CUDA backend" in line for line in refused)
    assert config_problems(experiment(simulators=["genn"], genn={"procedural_connectivity": True})) == []


def test_threads_per_spike_are_taken_only_with_procedural_connectivity():
    # Unset, the spec is as before the option existed (finished points are not rerun) and the backend uses 8.
    chosen = validated(
        experiment(simulators=["genn"], genn={"procedural_connectivity": True, "procedural_threads_per_spike": 32})
    )
    assert planning.expand_points(chosen["experiments"][0])[0]["simulator_options"] == {
        "procedural_connectivity": True,
        "procedural_threads_per_spike": 32,
    }
    assert genn.DEFAULT_OPTIONS["procedural_threads_per_spike"] == 8
    refused = config_problems(experiment(simulators=["genn"], genn={"procedural_threads_per_spike": 32}))
    assert any(
        "genn.procedural_threads_per_spike applies only with genn.procedural_connectivity: true" in line
        for line in refused
    )
    with pytest.raises(Exception, match="procedural_threads_per_spike"):
        validated(
            experiment(simulators=["genn"], genn={"procedural_connectivity": True, "procedural_threads_per_spike": 0})
        )


def test_an_unknown_genn_option_is_refused():
    with pytest.raises(Exception, match="procedual"):
        validated(experiment(simulators=["genn-cpu"], genn={"procedual_connectivity": True}))


# --- make prepare-gpu and make bench-gpu's table ------------------------------------------------


def test_the_gpu_bundle_asks_pip_for_the_gpu_machines_python(tmp_path):
    from snnbench.dev import prepare_gpu

    (command,) = prepare_gpu.wheel_commands("pygenn")
    assert "--only-binary=:all:" in command and command[command.index("--python-version") + 1] == "3.12"
    assert set(prepare_gpu.bundled_pins("pygenn")) <= set(command)
    # The GPU machine's numpy 2.5.2 stands for PyGeNN's numpy 2 pin; Brian2GeNN's numpy 1.26 travels.
    assert "numpy==2.4.6" in environments.pins("pygenn") and "numpy==2.4.6" not in command
    assert "numpy==1.26.4" in prepare_gpu.bundled_pins("brian2genn")
    assert [c for c in prepare_gpu.wheel_commands("norse") if "--no-deps" in c][0][-1] == "norse==1.1.0"
    assert "brian2cuda" not in prepare_gpu.DEFAULT_ENVIRONMENTS  # nvidia-curand alone is about the limit
    assert "--find-links" in command  # a wheel built here from a source distribution counts
    small, large = tmp_path / "small.whl", tmp_path / "large.whl"
    small.write_bytes(b"0" * 1024)
    large.write_bytes(b"0" * 3 * 2**20)
    assert prepare_gpu.over_limit([small, large], limit_mb=4) is None
    assert prepare_gpu.over_limit([small, large], limit_mb=2).startswith("3.0 MiB is more than the 2 MiB")


def test_the_gpu_table_keeps_pygenns_connectivity_apart():
    import pandas as pd
    from snnbench.dev import gpu_summary

    points = pd.DataFrame(
        {"simulator": ["nest", "genn", "genn", "brian2-genn"], "connectivity": [None, "sparse", "procedural", None]}
    )
    assert gpu_summary.simulator_label(points).tolist() == ["nest", "genn (sparse)", "genn (procedural)", "brian2-genn"]
    # Procedural points of a threads-per-spike sweep (genn-procedural-threads.yaml) stay apart too.
    points["procedural_threads_per_spike"] = [None, None, 32, None]
    assert gpu_summary.simulator_label(points).tolist()[2] == "genn (procedural, 32 threads/spike)"


def test_the_gpu_table_gives_a_failure_on_one_line():
    from snnbench.dev import gpu_summary

    reason = (
        "simulation exited with code 1; last log lines:\nTraceback (most recent call last):\n"
        '  File "run.py", line 34, in run\n\nPrerequisiteMissing: brian2-cuda needs a GPU\n'
    )
    assert gpu_summary.short_reason(reason) == (
        "simulation exited with code 1; last log lines: PrerequisiteMissing: brian2-cuda needs a GPU"
    )
    assert gpu_summary.short_reason("killed by SLURM (TIMEOUT)") == "killed by SLURM (TIMEOUT)"
    assert gpu_summary.short_reason(float("nan")) == ""


def test_the_poisson_probe_tells_independent_drive_from_shared_drive():
    # snnbench.dev.brian2genn_poisson_probe compares devices by these statistics: independent draws give a
    # pairwise correlation near 0, one trace shared by every neuron gives 1; white noise has no lag-1 memory.
    from snnbench.dev import brian2genn_poisson_probe as probe

    rng = np.random.default_rng(5)
    steps = 2000
    independent = rng.normal(size=(probe.NEURONS, steps))
    stats = probe.statistics({"v": independent, "I_syn": independent})
    assert abs(stats["I_syn_pairwise_correlation"]) < 0.01
    assert abs(stats["I_syn_autocorrelation_lag1"]) < 0.01
    shared = np.tile(rng.normal(size=steps), (probe.NEURONS, 1)) + 1e-3 * independent
    assert probe.statistics({"v": shared, "I_syn": shared})["I_syn_pairwise_correlation"] > 0.99
