"""A run that crashes, is killed or times out is recorded as failed, with the reason.

These use real child processes (the same code path as a simulation), not mocks.
"""

import json
import sys
import time
from pathlib import Path

import pytest
from conftest import experiment, run_first_point, validated
from snnbench import environments, planning
from snnbench.network import execute, simulators
from snnbench.run import supervise


def run(command, tmp_path, limit=30.0):
    log = tmp_path / "run.log"
    supervise.run_child(command, log, limit, threads=1)
    return log


def test_clean_exit(tmp_path):
    log = run([sys.executable, "-c", "print('hello')"], tmp_path)
    assert "hello" in log.read_text()


def test_crash_reports_exit_code_and_log_tail(tmp_path):
    with pytest.raises(supervise.PointFailed, match="exited with code 3") as failure:
        run([sys.executable, "-c", "import sys; print('boom: out of cheese'); sys.exit(3)"], tmp_path)
    assert "boom: out of cheese" in str(failure.value)


def test_kill_is_reported_with_its_signal(tmp_path):
    code = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    with pytest.raises(supervise.PointFailed, match="killed by SIGKILL .*out-of-memory"):
        run([sys.executable, "-c", code], tmp_path)


def test_time_limit_kills_the_whole_process_group(tmp_path):
    # The child starts a grandchild (like mpirun starting ranks); both must be gone afterwards.
    code = (
        "import subprocess, sys, time; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        "print(p.pid, flush=True); time.sleep(60)"
    )
    with pytest.raises(supervise.PointFailed, match="exceeded its time limit of 3 s"):
        run([sys.executable, "-c", code], tmp_path, limit=3.0)
    grandchild = int((tmp_path / "run.log").read_text().splitlines()[1])
    deadline = time.monotonic() + 5.0  # SIGKILL is delivered asynchronously
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(grandchild)


def alive(pid: int) -> bool:
    """Running, that is: neither gone nor a zombie waiting for an init that does not reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_multi_rank_point_without_mpi_fails_early(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no mpirun anywhere
    spec = planning.expand_points(
        validated(experiment(resources={"ranks_per_node": [2], "threads_per_rank": [1]}))["experiments"][0]
    )[0]
    with pytest.raises(supervise.PointFailed, match="2-rank point needs an MPI launcher"):
        execute.launch_command(spec, tmp_path / "spec.json", tmp_path)
    multi_node = dict(spec, resources=dict(spec["resources"], nodes=2, ranks=4))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    with pytest.raises(supervise.PointFailed, match="2-node point needs a SLURM allocation"):
        execute.launch_command(multi_node, tmp_path / "spec.json", tmp_path)


def test_environment_follows_simulator_and_shape(tmp_path, monkeypatch):
    one_rank, two_ranks = planning.expand_points(
        validated(experiment(resources={"ranks_per_node": [1, 2], "threads_per_rank": [1]}))["experiments"][0]
    )
    assert simulators.environment_for(one_rank) == "nest"
    assert simulators.environment_for(two_ranks) == "nest-mpi"
    assert simulators.python_for(one_rank, repo=tmp_path) == sys.executable  # NEST's wheel lives in .venv
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    with pytest.raises(simulators.EnvironmentMissing, match="run `make env-nest-mpi`"):
        simulators.python_for(two_ranks, repo=tmp_path)
    venv = tmp_path / ".venv-nest-mpi"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    with pytest.raises(simulators.EnvironmentMissing):  # half-built: no stamp yet
        simulators.python_for(two_ranks, repo=tmp_path)
    environments.link_marker("nest-mpi", tmp_path).write_text(environments.key("nest-mpi"))  # today's envs file
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))  # on the cached environment
    (tmp_path / "cache" / environments.key("nest-mpi")).mkdir(parents=True)
    (tmp_path / "cache" / environments.key("nest-mpi") / "build.json").write_text("{}")
    assert simulators.python_for(two_ranks, repo=tmp_path) == str(venv / "bin" / "python")


def test_failed_point_still_writes_a_valid_record(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    cfg = validated(experiment(resources={"ranks_per_node": [2], "threads_per_rank": [1]}))
    rec = run_first_point(tmp_path, cfg, 60)
    assert rec["status"] == "failed" and "MPI launcher" in rec["failure"]["reason"]
    assert json.loads((tmp_path / "record.json").read_text())["status"] == "failed"
    assert (tmp_path / "spikes.npz").exists()
    assert not (tmp_path / ".ranks").exists()  # rank outputs' scratch folder beside the record, removed
    assert "status failed" in (tmp_path / "log").read_text()
