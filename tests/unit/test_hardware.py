"""The hardware and software record: one file per node, gathered by the node's first rank, with
each rank's CPUs; missing tools say so instead of failing; provenance.html shows it per node."""

from __future__ import annotations

import json
import os
import socket

import pytest
from conftest import experiment, run_first_point, validated
from snnbench.machine import hardware
from snnbench.results import report


@pytest.mark.parametrize(
    ("environ", "local_rank"),
    [
        ({}, 0),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, 1),
        ({"SLURM_LOCALID": "2"}, 2),
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "0", "SLURM_LOCALID": "3"}, 0),
        ({"PMI_LOCAL_RANK": "x"}, 0),
    ],
)
def test_node_local_rank_from_the_launcher(environ, local_rank):
    assert hardware.node_local_rank(environ) == local_rank


def test_missing_tools_are_named_not_raised(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    assert hardware.topology().startswith("not available: lstopo not on PATH")
    assert "hwloc" in hardware.topology()
    assert hardware.mpi_library() == "not available: mpirun not on PATH"
    assert hardware.linked_libraries(["/x.so"]) == {"/x.so": "not available: ldd not on PATH"}
    assert hardware.linked_libraries([]) == {"": "not available: the simulator names no shared library"}
    assert hardware.loaded_modules({}).startswith("not available: no environment modules")
    assert hardware.installed_memory(tmp_path / "none")["error"].startswith("not available")


def test_memory_and_settings(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       2097152 kB\nMemFree: 1 kB\nMemAvailable:   1048576 kB\nSwapTotal: 0 kB\n")
    assert hardware.installed_memory(meminfo) == {"total_mb": 2048.0, "available_mb": 1024.0, "swap_total_mb": 0.0}
    environ = {"OMP_NUM_THREADS": "2", "SLURM_CPU_BIND": "cores", "SLURM_JOB_NODELIST": "n[1-2]", "HOME": "/root"}
    assert hardware.settings(environ) == {k: v for k, v in environ.items() if k != "HOME"}


def test_one_file_per_node_with_its_ranks(tmp_path, monkeypatch):
    ranks = tmp_path / ".ranks"
    ranks.mkdir()
    monkeypatch.setenv("SLURM_LOCALID", "1")
    assert hardware.write_node(ranks, []) is None  # not the node's first rank: writes nothing
    monkeypatch.setenv("SLURM_LOCALID", "0")
    node = hardware.write_node(ranks, [])
    host = socket.gethostname()
    assert node == ranks / f"node-{host}.json"
    bindings = [
        {"rank": 1, "host": host, "cpus": [1]},
        {"rank": 0, "host": host, "cpus": [0]},
        {"rank": 2, "host": "other", "cpus": [0, 1, 2, 3, 8]},
    ]
    assert hardware.write_nodes(ranks, bindings, tmp_path) == sorted([f"hardware/{host}.json", "hardware/other.json"])
    mine = json.loads((tmp_path / "hardware" / f"{host}.json").read_text())
    assert [r["rank"] for r in mine["ranks"]] == [0, 1] and mine["gather_s"] >= 0
    assert mine["memory"]["total_mb"] > 0 and mine["logical_cpus"] == os.cpu_count()
    other = json.loads((tmp_path / "hardware" / "other.json").read_text())
    assert other["topology"] == "not available: no rank of this node gathered its facts"
    assert hardware.summary(other) == (
        "other: ? CPUs, memory unknown, topology: not available: no rank of this node gathered its facts, "
        "MPI: unknown, modules: none; rank 2 on CPUs 0-3,8"
    )


def test_cpu_list():
    assert hardware.cpu_list([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    assert hardware.cpu_list([]) == ""


def test_a_point_writes_its_hardware_record(tmp_path):
    """A real NEST point: its node's file beside the record, named by the record, in provenance.html."""
    cfg = validated(experiment(resources={"threads_per_rank": [1]}))
    rec = run_first_point(tmp_path, cfg, 120)
    host = socket.gethostname()
    assert rec["status"] == "ok" and rec["hardware"] == [f"hardware/{host}.json"]
    node = json.loads((tmp_path / rec["hardware"][0]).read_text())
    assert node["hostname"] == host and node["ranks"][0]["rank"] == 0
    assert node["ranks"][0]["cpus"] == sorted(os.sched_getaffinity(0))
    assert "Core" in node["topology"] or node["topology"].startswith("not available")
    [(library, ldd)] = node["linked_libraries"].items()
    assert library.endswith(".so") and "nest" in library and "libc.so" in ldd
    assert node["mpi_library"]
    row = report.provenance_row(rec, tmp_path)
    assert row["hardware (per node)"].startswith(f"{host}: {os.cpu_count()} CPUs")
    assert "rank 0 on CPUs" in row["hardware (per node)"]
    assert report.provenance_row(rec, tmp_path / "elsewhere")["hardware (per node)"].endswith("missing")
