"""Binding ranks and threads to cores: the setting (a site default, an experiment's own), what each
launcher is told, what the operating system says of a thread's CPUs, how a run's binding is judged,
and the refusal of a binding this machine cannot give."""

from __future__ import annotations

import shutil
import sys

import pytest
from conftest import config_problems, experiment, validated
from snnbench import environments, planning
from snnbench.machine import affinity
from snnbench.network import binding, execute
from snnbench.planning import before_jobs

TWO_RANKS = {"ranks_per_node": [2], "threads_per_rank": [1]}
needs_mpi_nest = pytest.mark.skipif(
    not environments.is_linked("nest-mpi"), reason="MPI-capable NEST missing: run `make env-nest-mpi` (make test does)"
)


def first_point(**overrides) -> dict:
    return planning.expand_points(validated(experiment(**overrides))["experiments"][0])[0]


def test_the_site_default_binds_and_an_experiment_may_say_otherwise():
    config = validated(experiment(), experiment(name="loose", binding="none"))
    assert config["binding"] == "cores"  # the schema's default: what NEST's and beNNch's runs do
    assert [e["binding"] for e in config["experiments"]] == ["cores", "none"]
    site = {"experiments": [experiment()], "binding": "none"}
    planning.plan(site)
    assert site["experiments"][0]["binding"] == "none"
    # Only bound points carry it in their spec: unbound points keep the specs (and results) they had.
    assert first_point()["binding"] == "cores" and "binding" not in first_point(binding="none")


def test_a_binding_that_is_not_one_is_refused_naming_the_key():
    assert config_problems(experiment(binding="sockets")) == [
        "experiments[0].binding: 'sockets' is not one of ['none', 'cores']"
    ]
    assert config_problems(experiment(), binding="pinned") == ["binding: 'pinned' is not one of ['none', 'cores']"]


def test_openmp_placement_replaces_the_sites():
    environ = {"PATH": "/bin", "OMP_PLACES": "sockets", "GOMP_CPU_AFFINITY": "0-3", "KMP_AFFINITY": "compact"}
    bound = binding.environment(first_point(), environ)
    assert bound == {"PATH": "/bin", "OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
    assert binding.environment(first_point(binding="none"), environ) == {"PATH": "/bin", "OMP_PROC_BIND": "false"}


@needs_mpi_nest
@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun (Debian's openmpi-bin)")
def test_local_ranks_are_bound_by_mpirun(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    pinned = execute.launch_command(first_point(resources=TWO_RANKS), tmp_path / "spec.json", tmp_path)
    assert pinned[2:7] == ["2", "--map-by", "slot:PE=1", "--bind-to", "core"]
    loose = execute.launch_command(first_point(resources=TWO_RANKS, binding="none"), tmp_path / "s.json", tmp_path)
    assert loose[2:5] == ["2", "--bind-to", "none"]
    one_rank = execute.launch_command(first_point(resources={"threads_per_rank": [2]}), tmp_path / "s", tmp_path)
    assert one_rank[0] == sys.executable  # one process, its threads placed by OpenMP alone


def test_mpirun_other_than_open_mpi_cannot_bind_cores():
    with pytest.raises(ValueError, match="binding: none"):
        binding.mpirun_options(first_point(resources=TWO_RANKS), "HYDRA build details:")
    assert binding.mpirun_options(first_point(resources=TWO_RANKS, binding="none"), "HYDRA") == ["--bind-to", "none"]


@needs_mpi_nest
def test_slurm_ranks_are_bound_by_srun(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    ranks = execute.launch_command(first_point(resources=TWO_RANKS), tmp_path / "spec.json", tmp_path)
    assert ranks[0] == "srun" and ranks[5] == "--cpu-bind=cores"
    one = execute.launch_command(first_point(resources={"threads_per_rank": [2]}), tmp_path / "s.json", tmp_path)
    assert one[:6] == ["srun", "--overlap", "--nodes=1", "--ntasks=1", "--cpus-per-task=2", "--cpu-bind=cores"]
    loose = first_point(resources={"threads_per_rank": [2]}, binding="none")
    assert execute.launch_command(loose, tmp_path / "s.json", tmp_path)[0] == sys.executable  # in the executor's step
    assert "--cpu-bind=none" in execute.launch_command(
        first_point(resources=TWO_RANKS, binding="none"), tmp_path / "s.json", tmp_path
    )
    assert execute.launched_as(ranks, first_point()) == (
        "srun --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=1 --cpu-bind=cores; "
        "OMP_PROC_BIND=close OMP_PLACES=cores"
    )


def rank(number: int, threads: list[tuple[int, list[int], float]], host: str = "n1", per_rank: int = 1) -> dict:
    """A rank's output as the child writes it: its threads (tid, CPUs, CPU seconds in simulate)."""
    ran = [{"tid": tid, "cpus": cpus, "last_cpu": cpus[0], "cpu_s": s, "preempted": 0} for tid, cpus, s in threads]
    cores = {str(c): f"0:{c // 2}" for c in range(8)}  # two hardware threads per core
    pid = threads[0][0]
    return {
        "rank": number,
        "threads": per_rank,
        "host": host,
        "binding": {"pid": pid, "host": host, "threads": ran, "cores": cores},
    }


def test_a_run_is_judged_by_its_working_threads():
    idle = (99, [0, 1, 2, 3], 0.0)
    pinned = binding.judge("cores", [rank(0, [(10, [0], 1.0), idle]), rank(1, [(20, [2], 1.0)])], "srun")
    assert pinned["obtained"] == "pinned" and pinned["problems"] == []
    assert [(t["rank"], t["thread"], t["cores"]) for t in pinned["threads"]] == [(0, 0, ["0:0"]), (1, 0, ["0:1"])]
    # Two threads of one rank on the two hardware threads of one core.
    shared = binding.judge("cores", [rank(0, [(10, [0], 1.0), (11, [1], 0.9)], per_rank=2)], "srun")
    assert shared["obtained"] == "shared cores" and shared["problems"] == ["threads r0t0, r0t1 share core 0:0 of n1"]
    loose = binding.judge("cores", [rank(0, [(10, [0, 1, 2, 3], 1.0)])], "mpirun")
    assert loose["obtained"] == "unpinned" and "r0t0 (CPUs 0-3) may run on several cores" in loose["problems"][0]
    assert binding.judge("none", [rank(0, [(10, [0, 1, 2, 3], 1.0)])], "mpirun")["problems"] == []
    # The main thread first, however busy; a thread that did nothing is no worker.
    both = binding.judge("cores", [rank(0, [(10, [0], 0.2), (12, [2], 1.0), idle], per_rank=2)], "srun")
    assert [t["tid"] for t in both["threads"]] == [10, 12]
    elsewhere = binding.judge("cores", [rank(0, [(10, [0], 0.0)], per_rank=2)], "srun")
    assert elsewhere["obtained"] == "not measured" and "0 of its 2 threads" in elsewhere["problems"][0]


def test_binding_columns_and_records_from_before():
    rec = {"point": first_point(), "binding": binding.judge("cores", [rank(0, [(10, [0], 1.0)])], "srun")}
    assert binding.columns(rec) == {
        "binding": "cores",
        "binding_obtained": "pinned",
        "binding_cpus": "r0t0:0",
        "binding_last_cpus": "r0t0:0",
        "binding_problems": "",
    }
    assert binding.columns({"point": first_point(binding="none")}) == {
        "binding": "none",
        "binding_obtained": "not recorded",
    }


def test_local_binding_with_more_threads_than_cores_is_refused_before_any_job():
    cores, _ = affinity.usable_cores()
    too_many = {"threads_per_rank": [cores + 1]}
    campaign = planning.plan({"experiments": [experiment(name="fits", binding="none", resources=too_many)]})
    before_jobs.refuse_unplaceable(campaign, campaign.points)  # unbound: the operating system shares the cores
    campaign = planning.plan({"experiments": [experiment(), experiment(name="big", resources=too_many)]})
    with pytest.raises(before_jobs.CannotRun) as refused:
        before_jobs.refuse_unplaceable(campaign, campaign.points)
    message = str(refused.value)
    assert "experiments[1].binding (big: cores): cores gives each thread a core of its own" in message
    assert f"runs {cores + 1} threads on a node, on a machine of {cores} cores" in message
    assert "or binding: none" in message and "experiments[0]" not in message
    # A run aimed at the points that fit (e.g. one record) is not refused for the experiment's others.
    mixed = planning.plan({"experiments": [experiment(resources={"threads_per_rank": [1, cores + 1]})]})
    fits = {path: spec for path, spec in mixed.points.items() if spec["resources"]["threads_per_rank"] == 1}
    before_jobs.refuse_unplaceable(mixed, fits)
    with pytest.raises(before_jobs.CannotRun):
        before_jobs.refuse_unplaceable(mixed, mixed.points)
    # A dry run (which may plan another machine's presets) only says so.
    [line] = before_jobs.unplaceable_here(mixed, mixed.points, dry_run=True)
    assert line.startswith(
        "on this machine the run would be refused: Error in config (no config file) for this machine"
    )
