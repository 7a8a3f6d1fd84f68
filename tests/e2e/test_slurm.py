"""profiles/slurm on a real two-node SLURM cluster (tests/slurm/cluster.sh): every point a SLURM
job of its shape through the official executor plugin, MPI ranks via srun on one node or across
both, failures recorded.

The nodes have /tmp of their own, as compute nodes do: the workflows run from a folder both see
(SHARED), as on a cluster's shared file system."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import chdir
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import (
    DEFAULT_FIGURES,
    MPI_MODULE,
    NEST_MODULE,
    REPO,
    TINY,
    VENV_BIN,
    assert_plausible,
    copy_workflow,
    module_tree,
    validated,
)
from snnbench import environments, families, paths
from snnbench.network.models import hpc_benchmark as hpc
from snnbench.planning.experiments import expand_points

pytestmark = pytest.mark.slow


def estimate_mem_mb(spec: dict) -> int:
    """Memory per node that the execute rule asks for (common.smk's get_point_mem_mb: the point's family)."""
    return families.of_spec(spec).mem_mb(spec, {})


CLUSTER = REPO / "tests" / "slurm" / "cluster.sh"
SHARED = Path(os.environ.get("SNNBENCH_SLURM_STATE", "/var/tmp/snnbench-slurm")) / "work"
# Poll the scheduler every few seconds instead of the profile's site-friendly defaults.
FAST_POLLING = ["--slurm-init-seconds-before-status-checks", "2", "--seconds-between-status-checks", "2"]
# Nodes shared, so that SLURM grants each point its shape and no more: a whole node (the network
# points' default) comes with every CPU and n1's GPU. Whole nodes: tests/e2e/test_slurm_grants.py.
SHARED_NODES = {"exclusive": False}


def point(experiment: str, ranks: int, threads: int, nodes: int = 1, scale: str = "N0.02_K0.1") -> str:
    return f"results/{experiment}/nest/nodes{nodes}_ranks{ranks}_threads{threads}/{scale}/seed1"


# The test cluster's nodes have a /tmp of their own (config key slurm.node_local_paths' default).
NODE_LOCAL = Path("/tmp")
# The environments SLURM points of these tests run in, besides the workflow's own .venv.
POINT_ENVIRONMENTS = ("nest-mpi", "brian2genn", "multi-area-model")


def shared_checkout(source: Path, name: str) -> Path:
    """A checkout the nodes see, made from `source` (a checkout under a node-local folder): its
    files copied beside SHARED, `make env` there and the per-machine environments linked. Kept
    between runs (refreshed, not rebuilt), as a user's clone on the cluster's shared file system.
    Each pytest worker asks for it once: a refresh takes a lock and is skipped where the checkout
    was made from the same tree, since the other worker's SLURM jobs run from it (a refresh under
    them removed scripts/ and a job's `import snnbench` failed: the fresh clone's run of 2026-11-29)."""
    dest = SHARED.parent / "checkouts" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    made_from = dest.parent / f"{name}.made-from"
    with open(dest.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        digest = tree_digest(source)
        if made_from.is_file() and made_from.read_text() == digest and (dest / ".venv/bin/snakemake").exists():
            return dest
        made_from.unlink(missing_ok=True)
        kept = paths.copy_ignore(dest)(str(dest), [entry.name for entry in dest.glob("*")] if dest.exists() else [])
        for stale in dest.glob("*"):  # the code refreshed; the environments and a run's files kept
            if stale.name not in kept:
                remove(stale)
        shutil.copytree(source, dest, ignore=paths.copy_ignore(source), dirs_exist_ok=True)
        for command in (
            ["make", "env"],
            [".venv/bin/python", "-m", "snnbench.environments.maker", *POINT_ENVIRONMENTS],
        ):
            made = subprocess.run(command, cwd=dest, capture_output=True, text=True, timeout=1800)
            assert made.returncode == 0, f"{' '.join(command)} in {dest}:\n{made.stdout[-2000:]}\n{made.stderr[-3000:]}"
        made_from.write_text(digest)
    return dest


def remove(path: Path) -> None:
    """A link, a file or a folder, where there is one."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def tree_digest(source: Path) -> str:
    """What a refresh of a shared checkout would copy from `source` (paths, sizes, modification times)."""
    ignore, digest = paths.copy_ignore(source), hashlib.sha256()
    for folder, folders, files in os.walk(source):
        skipped = ignore(folder, folders + files)
        folders[:] = sorted(name for name in folders if name not in skipped)
        for name in sorted(name for name in files if name not in skipped):
            path = Path(folder, name)
            stat = path.lstat()
            digest.update(f"{path.relative_to(source)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


@functools.cache
def snakemake_bin() -> Path:
    """The Snakemake the SLURM tests run: this checkout's, or where it lies under the nodes' private
    /tmp (a clone in /tmp) that of a shared checkout of it, whose jobs the nodes can start."""
    if not REPO.is_relative_to(NODE_LOCAL):
        return VENV_BIN / "snakemake"
    name = "repo-" + hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    return shared_checkout(REPO, name) / ".venv" / "bin" / "snakemake"


def slurm_snakemake(workdir: Path, configfile: str, *args: str, check=True, **popen) -> subprocess.CompletedProcess:
    command = [str(snakemake_bin()), "--profile", "profiles/slurm", "--configfile", configfile, *FAST_POLLING]
    proc = subprocess.run([*command, *args], cwd=workdir, capture_output=True, text=True, timeout=900, **popen)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def sacct_state(job_id: str, settle_s: float = 60) -> str:
    """The job's final state in SLURM's accounting, which slurmdbd may store some seconds late."""
    deadline = time.time() + settle_s
    state = sacct(job_id, "State")
    while state in ("", "PENDING", "RUNNING", "COMPLETING") and time.time() < deadline:
        time.sleep(1)
        state = sacct(job_id, "State")
    return state


def sacct(job_id: str, field: str) -> str:
    out = subprocess.run(["sacct", "-X", "-n", "-P", "-j", job_id, "-o", field], capture_output=True, text=True)
    return out.stdout.strip()


# The test modules using the cluster (this one, test_slurm_grants.py), perhaps in two pytest workers at
# once (make test): which processes use it and whether one of them started it. The last to leave stops
# a cluster that a test started, never one that was running before.
USERS = SHARED.parent / "cluster-users.json"


@contextlib.contextmanager
def cluster_users():
    """The users' file, locked for the block: {"started": bool, "users": [living pids]}."""
    USERS.parent.mkdir(parents=True, exist_ok=True)
    with open(USERS.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        users = json.loads(USERS.read_text()) if USERS.exists() else {"started": False, "users": []}
        users["users"] = [pid for pid in users["users"] if os.path.exists(f"/proc/{pid}")]
        yield users
        USERS.write_text(json.dumps(users))


@pytest.fixture(scope="module")
def cluster():
    if os.geteuid() != 0:
        pytest.skip("the local SLURM cluster needs root (daemons, /etc/slurm)")
    with cluster_users() as users:
        # On a fresh machine SLURM is not installed yet: cluster.sh installs it.
        scontrol = shutil.which("scontrol")
        running = scontrol is not None and subprocess.run([scontrol, "ping"], capture_output=True).returncode == 0
        started = subprocess.run([str(CLUSTER), "start"], capture_output=True, text=True)
        assert started.returncode == 0, f"cluster.sh start failed:\n{started.stdout}\n{started.stderr}"
        users["started"] = (users["started"] and bool(users["users"])) or not running
        users["users"].append(os.getpid())
    yield
    with cluster_users() as users:
        users["users"].remove(os.getpid())
        if users["started"] and not users["users"]:
            subprocess.run([str(CLUSTER), "stop"], capture_output=True)
            users["started"] = False


@pytest.fixture(scope="module")
def shared_dir():
    """Makes folders that every node sees (not /tmp); they go at the end of the module."""
    SHARED.mkdir(parents=True, exist_ok=True)
    made = []

    def make(name: str) -> Path:
        made.append(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=SHARED)))
        return made[-1]

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def needs_mpi_nest():
    if not environments.is_linked("nest-mpi"):
        pytest.skip("MPI-capable NEST missing: run `make env-nest-mpi` (make test does)")


def site_modules(workdir: Path) -> dict:
    return {"site": {"modules": [NEST_MODULE], "modulepath": [str(module_tree(workdir / "modulefiles"))]}}


@pytest.fixture(scope="module")
def shapes_run(cluster, shared_dir):
    needs_mpi_nest()
    workdir = copy_workflow(shared_dir("slurm"))
    config = {
        "slurm": SHARED_NODES,
        "experiments": [
            dict(TINY, name="slurm-threads", resources={"threads_per_rank": [1, 2]}),
            dict(TINY, name="slurm-ranks", resources={"ranks_per_node": [2], "threads_per_rank": [1]}),
            dict(
                TINY,
                name="slurm-timeout",
                resources={"threads_per_rank": [1]},
                pd14=dict(TINY["pd14"], t_sim_ms=200_000),
                time_limit_min=0.05,
            ),
            # A GPU point: SLURM gives it the test cluster's (dummy) GPU; without CUDA it must fail.
            dict(TINY, name="slurm-gpu", simulators=["brian2-genn"], resources={"threads_per_rank": [1]}),
            # NEST as the site's module (Lmod), from a module tree on the shared folder.
            dict(TINY, name="slurm-modules", builds=site_modules(workdir), resources={"threads_per_rank": [1]}),
        ],
    }
    (workdir / "config" / "slurm.yaml").write_text(yaml.safe_dump(config))
    slurm_snakemake(workdir, "config/slurm.yaml")
    return workdir


def test_each_point_is_a_slurm_job_of_its_shape(shapes_run):
    workdir = shapes_run
    records = {
        p: json.loads((workdir / p / "record.json").read_text())
        for p in (point("slurm-threads", 1, 1), point("slurm-threads", 1, 2), point("slurm-ranks", 2, 1))
    }
    jobs = [rec["provenance"]["slurm"]["job_id"] for rec in records.values()]
    assert len(set(jobs)) == 3 and all(sacct_state(job) == "COMPLETED" for job in jobs)
    for path, rec in records.items():
        assert rec["status"] == "ok", (path, rec["failure"])
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"]
        threads = rec["point"]["resources"]["threads_per_rank"]
        assert rec["provenance"]["slurm"]["cpus_per_task"] == str(threads)
        assert rec["provenance"]["slurm"]["partition"] == "debug" and rec["provenance"]["slurm"]["node_list"]
        assert [r["threads"] for r in rec["ranks"]] == [threads] * rec["point"]["resources"]["ranks"]

    mpi = records[point("slurm-ranks", 2, 1)]
    assert [r["rank"] for r in mpi["ranks"]] == [0, 1] and {r["num_ranks"] for r in mpi["ranks"]} == {2}
    assert mpi["simulator"]["have_mpi"] and "Open MPI" in mpi["simulator"]["mpi_library"]
    assert mpi["provenance"]["slurm"]["ntasks"] == "2"


def test_a_gpu_point_gets_a_gpu_from_slurm_and_fails_without_cuda(shapes_run):
    workdir = shapes_run
    gpu_point = "results/slurm-gpu/brian2-genn/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    rec = json.loads((workdir / gpu_point / "record.json").read_text())
    assert rec["status"] == "failed" and re.search(r"GPU|CUDA", rec["failure"]["reason"]), rec["failure"]
    job = rec["provenance"]["slurm"]["job_id"]
    assert "gres/gpu=1" in sacct(job, "AllocTRES") and "gres/gpu=1" in rec["provenance"]["slurm"]["tres"]
    assert rec["provenance"]["environment"]["CUDA_VISIBLE_DEVICES"] == "0"  # as SLURM set it
    cpu = json.loads((workdir / point("slurm-threads", 1, 1) / "record.json").read_text())
    assert "gres/gpu" not in sacct(cpu["provenance"]["slurm"]["job_id"], "AllocTRES")
    assert "CUDA_VISIBLE_DEVICES" not in cpu["provenance"]["environment"]
    points = pd.read_csv(workdir / "results" / "slurm-gpu" / "points.csv")
    assert list(points["status"]) == ["failed"]


@pytest.fixture(scope="module")
def binding_run(cluster, shared_dir):
    """2 ranks on one node and 1 rank of 2 threads bound to cores (srun --cpu-bind=cores), and 2 ranks not bound."""
    needs_mpi_nest()
    workdir = copy_workflow(shared_dir("binding"))
    experiments = [
        dict(TINY, name="slurm-pinned", binding="cores", resources={"ranks_per_node": [1, 2], "threads_per_rank": [1]}),
        dict(TINY, name="slurm-pinned-threads", binding="cores", resources={"threads_per_rank": [2]}),
        dict(TINY, name="slurm-unpinned", binding="none", resources={"ranks_per_node": [2], "threads_per_rank": [1]}),
    ]
    (workdir / "config" / "binding.yaml").write_text(yaml.safe_dump({"experiments": experiments}))
    slurm_snakemake(workdir, "config/binding.yaml")
    return workdir


def test_ranks_and_threads_of_a_slurm_point_are_on_distinct_cores(binding_run):
    workdir = binding_run
    for path, launched in (
        (
            point("slurm-pinned", 2, 1),
            "srun --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=1 --cpu-bind=cores",
        ),
        (point("slurm-pinned-threads", 1, 2), "srun --overlap --nodes=1 --ntasks=1 --cpus-per-task=2 --cpu-bind=cores"),
    ):
        rec = json.loads((workdir / path / "record.json").read_text())
        assert rec["status"] == "ok", (path, rec["failure"])
        binding = rec["binding"]
        assert binding["asked"] == "cores" and binding["launch"].startswith(launched), binding["launch"]
        assert "OMP_PROC_BIND=close OMP_PLACES=cores" in binding["launch"]
        # Two working threads (two ranks' main threads, or one rank's two threads), each allowed on one
        # CPU, on two different cores of the node, as the operating system saw them during simulate.
        threads = binding["threads"]
        assert len(threads) == 2 and len({t["host"] for t in threads}) == 1, threads
        assert all(len(t["cpus"]) == 1 and t["last_cpu"] in t["cpus"] for t in threads), threads
        assert len({t["cores"][0] for t in threads}) == 2, threads
        assert binding["obtained"] == "pinned" and binding["problems"] == [], binding
    # The ranks' own CPUs as srun gave them, in the hardware record: one each, not the same.
    rec = json.loads((workdir / point("slurm-pinned", 2, 1) / "record.json").read_text())
    [node] = [json.loads((workdir / point("slurm-pinned", 2, 1) / name).read_text()) for name in rec["hardware"]]
    assert (
        sorted(len(r["cpus"]) for r in node["ranks"]) == [1, 1] and node["ranks"][0]["cpus"] != node["ranks"][1]["cpus"]
    )


def test_unbound_slurm_ranks_may_run_on_every_cpu_of_their_node(binding_run):
    rec = json.loads((binding_run / point("slurm-unpinned", 2, 1) / "record.json").read_text())
    assert rec["status"] == "ok", rec["failure"]
    assert "--cpu-bind=none" in rec["binding"]["launch"] and "OMP_PROC_BIND=false" in rec["binding"]["launch"]
    assert rec["binding"]["obtained"] == "unpinned"
    assert all(len(t["cpus"]) > 1 for t in rec["binding"]["threads"]), rec["binding"]["threads"]
    table = pd.read_csv(binding_run / "results" / "slurm-unpinned" / "points.csv")
    assert table[["binding", "binding_obtained"]].values.tolist() == [["none", "unpinned"]]


def test_a_module_build_point_is_a_slurm_job_with_its_modules_loaded(shapes_run):
    workdir = shapes_run
    path = "results/slurm-modules/nest@site/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    rec = json.loads((workdir / path / "record.json").read_text())
    assert rec["status"] == "ok", rec["failure"]
    assert sacct_state(rec["provenance"]["slurm"]["job_id"]) == "COMPLETED"
    loaded = rec["provenance"]["build"]["modules"]
    assert loaded["loaded"] == loaded["module_list"] == [MPI_MODULE, NEST_MODULE]
    assert loaded["modulepath"] == str(workdir / "modulefiles")
    assert rec["simulator"]["version"].startswith("3.10") and rec["ranks"][0]["host"] in ("n1", "n2")


def test_time_limit_is_recorded_and_tables_complete(shapes_run):
    workdir = shapes_run
    rec = json.loads((workdir / point("slurm-timeout", 1, 1) / "record.json").read_text())
    assert rec["status"] == "failed" and "exceeded its time limit" in rec["failure"]["reason"]
    assert sacct_state(rec["provenance"]["slurm"]["job_id"]) == "COMPLETED"  # recorded before SLURM stepped in
    table = pd.read_csv(workdir / "results/points.csv")
    assert sorted(zip(table["experiment"], table["status"], strict=True)) == [
        ("slurm-gpu", "failed"),
        ("slurm-modules", "ok"),
        ("slurm-ranks", "ok"),
        ("slurm-threads", "ok"),
        ("slurm-threads", "ok"),
        ("slurm-timeout", "failed"),
    ]
    assert table["slurm_job_id"].notna().all()
    assert all((workdir / f"results/slurm-ranks/figures/{name}.png").exists() for name in DEFAULT_FIGURES)


def test_cancelled_point_is_failed_and_reruns_alone(cluster, shared_dir):
    workdir = copy_workflow(shared_dir("cancel"))
    config = {
        "experiments": [
            dict(
                TINY, name="slurm-cancel", resources={"threads_per_rank": [1]}, pd14=dict(TINY["pd14"], t_sim_ms=8000)
            ),
            dict(TINY, name="slurm-other", resources={"threads_per_rank": [1]}),
        ]
    }
    (workdir / "config" / "cancel.yaml").write_text(yaml.safe_dump(config))
    log = workdir / "logs/execute/slurm-cancel/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log"
    command = [str(snakemake_bin()), "--profile", "profiles/slurm", "--configfile", "config/cancel.yaml"]
    run = subprocess.Popen([*command, *FAST_POLLING], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 180
    while not (log.exists() and "running:" in log.read_text()) and time.time() < deadline:
        time.sleep(0.5)
    jobs = subprocess.run(["squeue", "-h", "-o", "%i %k"], capture_output=True, text=True).stdout.splitlines()
    job = next(line.split()[0] for line in jobs if "slurm-cancel" in line)
    subprocess.run(["scancel", job], check=True)
    output = run.communicate(timeout=300)[0].decode()
    assert run.returncode != 0, output[-3000:]

    cancelled = json.loads((workdir / point("slurm-cancel", 1, 1) / "record.json").read_text())
    assert cancelled["status"] == "failed" and "SLURM" in cancelled["failure"]["reason"], cancelled["failure"]
    other = json.loads((workdir / point("slurm-other", 1, 1) / "record.json").read_text())
    assert other["status"] == "ok"  # the rest completed
    assert (workdir / "results/slurm-other/points.csv").exists()
    # Its own experiment's tables, from the records on disk, show it as failed.
    assert list(pd.read_csv(workdir / "results/slurm-cancel/points.csv")["status"]) == ["failed"]

    # Rerunning that point alone succeeds; the next full run makes the tables and redoes nothing else.
    target = f"{point('slurm-cancel', 1, 1)}/record.json"
    other_mtime = (workdir / point("slurm-other", 1, 1) / "record.json").stat().st_mtime_ns
    slurm_snakemake(workdir, "config/cancel.yaml", "--forcerun", target, target)
    rerun = json.loads((workdir / target).read_text())
    assert rerun["status"] == "ok" and rerun["provenance"]["slurm"]["job_id"] != job
    slurm_snakemake(workdir, "config/cancel.yaml")
    assert list(pd.read_csv(workdir / "results/slurm-cancel/points.csv")["status"]) == ["ok"]
    assert (workdir / point("slurm-other", 1, 1) / "record.json").stat().st_mtime_ns == other_mtime


# NEST's hpc_benchmark as beNNch runs it, the network growing with the nodes (1 125 neurons per VP
# at a tenth of the in-degrees, as tests/e2e/test_hpc_benchmark.py: smaller ones fire in bursts).
HPC_PER_VP = {"neuron_scale_per_vp": 0.1, "indegree_scale": 0.1, "t_presim_ms": 100.0, "t_sim_ms": 500.0}


def two_node_experiments() -> list[dict]:
    """Strong scaling of one tiny model over 1 and 2 nodes of 1 and 2 ranks; weak scaling over 1
    and 2 nodes at the tiny model's neurons per virtual process, and of hpc_benchmark."""
    weak_pd14 = {k: v for k, v in TINY["pd14"].items() if k != "neuron_scale"}
    one_rank_per_node = {"nodes": [1, 2], "ranks_per_node": [1], "threads_per_rank": [1]}
    return [
        dict(TINY, name="nodes-strong", resources={"nodes": [1, 2], "ranks_per_node": [1, 2], "threads_per_rank": [1]}),
        dict(
            TINY,
            name="nodes-weak",
            scaling="weak",
            resources=one_rank_per_node,
            pd14=dict(weak_pd14, neuron_scale_per_vp=TINY["pd14"]["neuron_scale"] / 2),
        ),
        {
            "name": "nodes-hpc",
            "model": "hpc_benchmark",
            "simulators": ["nest"],
            "scaling": "weak",
            "resources": one_rank_per_node,
            "hpc_benchmark": HPC_PER_VP,
            "seeds": [1],
        },
    ]


@pytest.fixture(scope="module")
def two_node_run(cluster, shared_dir):
    needs_mpi_nest()
    workdir = copy_workflow(shared_dir("nodes"))
    config = {"slurm": SHARED_NODES, "experiments": two_node_experiments()}
    (workdir / "config" / "nodes.yaml").write_text(yaml.safe_dump(config))
    slurm_snakemake(workdir, "config/nodes.yaml")
    specs = [spec for exp in validated(*two_node_experiments())["experiments"] for spec in expand_points(exp)]
    records = {spec["path"]: json.loads((workdir / spec["path"] / "record.json").read_text()) for spec in specs}
    return workdir, specs, records


def test_points_run_across_both_nodes(two_node_run):
    workdir, specs, records = two_node_run
    assert len(specs) == 8
    for spec in specs:
        rec, res = records[spec["path"]], spec["resources"]
        assert rec["status"] == "ok", (spec["path"], rec["failure"])
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"]
        # Each node runs ranks_per_node ranks, on its own hostname; rank outputs from every node arrived.
        hosts = [r["host"] for r in sorted(rec["ranks"], key=lambda r: r["rank"])]
        assert len(hosts) == res["ranks"]
        assert sorted(hosts.count(host) for host in set(hosts)) == [res["ranks_per_node"]] * res["nodes"]
        if res["nodes"] == 2:
            assert set(hosts) == {"n1", "n2"} and rec["provenance"]["slurm"]["node_list"] == "n[1-2]"
        assert not (workdir / spec["path"] / ".ranks").exists()  # the scratch folder of rank outputs is gone
    weak = sorted((s for s in specs if s["experiment"] == "nodes-weak"), key=lambda s: s["resources"]["nodes"])
    assert [s["model"]["neuron_scale"] for s in weak] == [0.01, 0.02]  # neurons grow with the nodes
    table = pd.read_csv(workdir / "results/points.csv")
    assert len(table) == 8 and (table["status"] == "ok").all()


def test_hpc_benchmark_grows_with_the_nodes_and_plasticity_acts_across_them(two_node_run):
    """hpc_benchmark on 1 and 2 nodes (1 and 2 ranks): the network the formulas give for its VPs,
    the sampled E->E weights moved on both, the weak-scaling figures and the weights figure."""
    workdir, specs, records = two_node_run
    hpc_specs = sorted((s for s in specs if s["experiment"] == "nodes-hpc"), key=lambda s: s["resources"]["nodes"])
    assert [s["resources"]["ranks"] for s in hpc_specs] == [1, 2]
    for spec in hpc_specs:
        rec = records[spec["path"]]
        net = hpc.derive(HPC_PER_VP["neuron_scale_per_vp"] * spec["resources"]["ranks"], HPC_PER_VP["indegree_scale"])
        assert rec["network"]["num_neurons"] == int(net.num_neurons.sum())
        assert rec["network"]["num_synapses"] == net.total_synapses
        weights = rec["model_results"]["ee_weights_pA"]
        assert weights["sd"] > 0 and weights["mean"] != pytest.approx(weights["initial"])
        assert_plausible(rec)
    figures = workdir / "results/nodes-hpc/figures"
    assert (figures / "scaling.png").exists() and (figures / "weights.png").exists()


def test_two_nodes_match_two_ranks_on_one_node(two_node_run):
    # Both have two virtual processes: NEST builds the same network and produces the same spikes.
    workdir, specs, records = two_node_run
    across = point("nodes-strong", ranks=1, threads=1, nodes=2)
    within = point("nodes-strong", ranks=2, threads=1, nodes=1)
    assert {r["host"] for r in records[across]["ranks"]} == {"n1", "n2"}
    assert len({r["host"] for r in records[within]["ranks"]}) == 1
    assert records[across]["network"]["num_synapses"] == records[within]["network"]["num_synapses"]
    spikes = []
    for path in (across, within):
        with np.load(workdir / path / "spikes.npz") as data:
            order = np.lexsort((data["senders"], data["times_ms"]))
            spikes.append((data["senders"][order], data["times_ms"][order]))
    assert spikes[0][0].size > 0
    np.testing.assert_array_equal(spikes[0][0], spikes[1][0])
    np.testing.assert_array_equal(spikes[0][1], spikes[1][1])


def test_hardware_record_has_a_file_per_node(two_node_run):
    """Each point's hardware record: one file per node it ran on, gathered by one rank there, with
    that node's ranks and their CPUs; provenance.html shows every node."""
    workdir, specs, records = two_node_run
    for spec in specs:
        rec, res = records[spec["path"]], spec["resources"]
        hosts = sorted({r["host"] for r in rec["ranks"]})
        assert rec["hardware"] == [f"hardware/{host}.json" for host in hosts] and len(hosts) == res["nodes"]
        for host in hosts:
            node = json.loads((workdir / spec["path"] / "hardware" / f"{host}.json").read_text())
            assert node["hostname"] == host and "PU" in node["topology"] and node["memory"]["total_mb"] > 0
            [(library, ldd)] = node["linked_libraries"].items()
            assert node["mpi_library"].startswith("Open MPI") and library.endswith("nestkernel_api.so")
            assert ("libmpi" in ldd) == (res["ranks"] > 1)  # one rank runs the PyPI NEST, more NEST with MPI
            assert len(node["ranks"]) == res["ranks_per_node"] and {r["host"] for r in node["ranks"]} == {host}
            assert all(len(r["cpus"]) >= res["threads_per_rank"] for r in node["ranks"])
            if res["nodes"] == 2:
                assert node["settings"]["SLURM_JOB_NODELIST"] == "n[1-2]"
        # The machine: the test cluster's name and the job's partition.
        assert rec["provenance"]["machine"]["name"] == "snnbench:debug"
    html = (workdir / "results/nodes-strong/provenance.html").read_text()
    assert "n1: " in html and "n2: " in html and "rank 1 on CPUs" in html


def test_slurm_grants_the_shape_of_each_point(two_node_run):
    # What SLURM granted (sacct), against the point's shape: nodes, tasks on each node, cpus per
    # task, and memory per node (--mem: the estimate spread over the nodes) times the nodes.
    workdir, specs, records = two_node_run
    for spec in specs:
        res, slurm = spec["resources"], records[spec["path"]]["provenance"]["slurm"]
        granted = dict(item.split("=") for item in sacct(slurm["job_id"], "AllocTRES").split(","))
        assert int(granted["node"]) == res["nodes"] == int(slurm["nodes"])
        assert int(slurm["ntasks"]) == res["ranks"] and int(slurm["cpus_per_task"]) == res["threads_per_rank"]
        assert int(granted["cpu"]) == res["ranks"] * res["threads_per_rank"]
        assert megabytes(granted["mem"]) == estimate_mem_mb(spec) * res["nodes"]


def megabytes(tres: str) -> int:
    """sacct's TRES memory ("1400M", "2G") in MB."""
    return int(float(tres[:-1]) * {"M": 1, "G": 1024, "T": 1024**2}[tres[-1]])


def test_lost_node_fails_its_point_which_reruns_alone(cluster, shared_dir):
    # A 2-node point loses its second node mid-run (tests/slurm/cluster.sh lose n2: the node's
    # processes killed, slurmctld told it is DOWN). The other point asks for a whole node (2 CPUs),
    # so it runs before the 2-node job or after the loss, on the node that is left.
    needs_mpi_nest()
    workdir = copy_workflow(shared_dir("lost"))
    config = {
        "experiments": [
            dict(
                TINY,
                name="slurm-lost",
                resources={"nodes": [2], "ranks_per_node": [1], "threads_per_rank": [1]},
                pd14=dict(TINY["pd14"], t_sim_ms=5000),
            ),
            dict(TINY, name="slurm-kept", resources={"threads_per_rank": [2]}),
        ]
    }
    (workdir / "config" / "lost.yaml").write_text(yaml.safe_dump(config))
    lost, kept = point("slurm-lost", 1, 1, nodes=2), point("slurm-kept", 1, 2)
    log = workdir / "logs/execute/slurm-lost/nest/nodes2_ranks1_threads1/N0.02_K0.1/seed1.log"
    command = [str(snakemake_bin()), "--profile", "profiles/slurm", "--configfile", "config/lost.yaml"]
    run = subprocess.Popen([*command, *FAST_POLLING], cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 300
        while not (log.exists() and "running:" in log.read_text()) and time.time() < deadline:
            time.sleep(0.5)
        time.sleep(2)  # the ranks are starting or simulating on both nodes
        subprocess.run([str(CLUSTER), "lose", "n2"], check=True, capture_output=True)
        output = run.communicate(timeout=600)[0].decode()
        assert run.returncode != 0, output[-3000:]

        # Its record says failed with SLURM's reason; the other point finished on the node left.
        failed = json.loads((workdir / lost / "record.json").read_text())
        assert failed["status"] == "failed" and "NODE_FAIL" in failed["failure"]["reason"], failed["failure"]
        assert sacct_state(failed["provenance"]["slurm"]["job_id"]) == "NODE_FAIL"
        assert json.loads((workdir / kept / "record.json").read_text())["status"] == "ok"
        assert list(pd.read_csv(workdir / "results/slurm-kept/points.csv")["status"]) == ["ok"]

        # Its experiment's tables, written from the records on disk (onerror), show it as failed.
        table = pd.read_csv(workdir / "results/slurm-lost/points.csv")
        assert list(table["status"]) == ["failed"] and "NODE_FAIL" in table["failure_reason"].item()
        assert "tables of slurm-lost written from the records on disk" in output, output[-3000:]
    finally:
        if run.poll() is None:
            run.kill()
        subprocess.run([str(CLUSTER), "restore", "n2"], check=True, capture_output=True)

    # With the node back, the rerun command redoes that point alone, across both nodes.
    kept_mtime = (workdir / kept / "record.json").stat().st_mtime_ns
    slurm_snakemake(workdir, "config/lost.yaml", "--forcerun", f"{lost}/record.json")
    rerun = json.loads((workdir / lost / "record.json").read_text())
    assert rerun["status"] == "ok" and {r["host"] for r in rerun["ranks"]} == {"n1", "n2"}
    assert (workdir / kept / "record.json").stat().st_mtime_ns == kept_mtime
    assert list(pd.read_csv(workdir / "results/slurm-lost/points.csv")["status"]) == ["ok"]


def test_a_job_that_dies_before_its_point_runs_is_failed_and_reruns(cluster, shared_dir, tmp_path):
    """A job that ends before the point's wrapper runs (here: Snakemake started with a Python the
    nodes do not have, under this host's /tmp) gets a failed record quoting its SLURM log, the
    tables show it failed, and the next run (with a Python the nodes see) redoes it. Without the
    override of slurm.node_local_paths the workflow refuses that Python before any job."""
    venv = Path(sys.prefix)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(Path(sys.executable))
    (tmp_path / "lib").symlink_to(venv / "lib")
    shutil.copy(venv / "pyvenv.cfg", tmp_path / "pyvenv.cfg")
    workdir = copy_workflow(shared_dir("dead-job"))
    config = {"experiments": [dict(TINY, name="slurm-dead", resources={"threads_per_rank": [1]})]}
    (workdir / "config" / "dead.yaml").write_text(yaml.safe_dump(config))
    unseen = [str(tmp_path / "bin" / "python"), "-m", "snakemake", "--profile", "profiles/slurm", *FAST_POLLING]
    unseen += ["--configfile", "config/dead.yaml"]
    refused = subprocess.run([*unseen, "-n"], cwd=workdir, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0
    assert f"the workflow's Python (sys.executable): {tmp_path}/bin/python" in refused.stdout + refused.stderr

    override = ["--config", "slurm={node_local_paths: [/nowhere]}"]
    proc = subprocess.run([*unseen, *override], cwd=workdir, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    record = workdir / point("slurm-dead", 1, 1) / "record.json"
    rec = json.loads(record.read_text())
    reason = rec["failure"]["reason"]
    assert rec["status"] == "failed" and rec["wall_time_s"] is None
    assert "ended before the point's wrapper wrote its record" in reason
    assert ".snakemake/slurm_logs/rule_execute_point_pd14/slurm-dead_nest_nodes1" in reason
    assert f"{tmp_path}/bin/python: not found" in reason
    assert list(pd.read_csv(workdir / "results/slurm-dead/points.csv")["status"]) == ["failed"]

    slurm_snakemake(workdir, "config/dead.yaml")
    assert json.loads(record.read_text())["status"] == "ok"
    assert list(pd.read_csv(workdir / "results/slurm-dead/points.csv")["status"]) == ["ok"]


def test_a_clone_in_tmp_runs_slurm_points_from_a_checkout_the_nodes_see(cluster, shared_dir, tmp_path):
    """A user's clone under /tmp, which the nodes cannot see: its SLURM points run from a shared
    checkout of it (as the refusal of node-local paths tells a user to do), and succeed."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    assert clone.is_relative_to(NODE_LOCAL)
    checkout = shared_checkout(clone, "tmp-clone")
    workdir = copy_workflow(shared_dir("tmp-clone"))
    one = dict(TINY, name="slurm-one", resources={"threads_per_rank": [1]})
    (workdir / "config" / "one.yaml").write_text(yaml.safe_dump({"experiments": [one]}))
    command = [str(checkout / ".venv/bin/snakemake"), "--profile", "profiles/slurm", "--configfile", "config/one.yaml"]
    proc = subprocess.run([*command, *FAST_POLLING], cwd=workdir, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rec = json.loads((workdir / point("slurm-one", 1, 1) / "record.json").read_text())
    assert rec["status"] == "ok" and rec["provenance"]["slurm"]["job_id"]
    executable = Path(rec["provenance"]["python"]["executable"])
    assert executable.is_relative_to(checkout) or not executable.is_relative_to(NODE_LOCAL), executable


MAM_TWO_NODES = {
    "name": "nodes-mam",
    "model": "multi_area_model",
    "simulators": ["nest"],
    "scaling": "strong",
    "resources": {"nodes": [2], "ranks_per_node": [1], "threads_per_rank": [1]},
    "multi_area_model": {
        "neuron_scale": 0.01,
        "indegree_scale": 0.01,
        "areas_simulated": ["V1", "V2"],
        "t_presim_ms": 50.0,
        "t_sim_ms": 200.0,
    },
    "seeds": [1],
}


def test_the_multi_area_model_runs_a_point_across_both_nodes(cluster, shared_dir):
    """The multi-area model's description is derived on the submitting host (a local rule), and its
    NEST point runs as one SLURM job of two nodes, one MPI rank each, its memory request made from the
    description's synapse count once it exists."""
    needs_mpi_nest()
    workdir = copy_workflow(shared_dir("mam"))
    (workdir / "config" / "mam.yaml").write_text(yaml.safe_dump({"experiments": [MAM_TWO_NODES]}))
    slurm_snakemake(workdir, "config/mam.yaml")
    path = workdir / "results/nodes-mam/nest/nodes2_ranks1_threads1/N0.01_K0.01/seed1"
    rec = json.loads((path / "record.json").read_text())
    assert rec["status"] == "ok", rec["failure"]
    description = json.loads(next((workdir / "networks" / "multi_area_model").glob("*/description.json")).read_text())
    assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] == description["totals"]["synapses"]
    assert sorted(r["host"] for r in rec["ranks"]) == ["n1", "n2"]
    assert rec["provenance"]["slurm"]["node_list"] == "n[1-2]"
    granted = dict(item.split("=") for item in sacct(rec["provenance"]["slurm"]["job_id"], "AllocTRES").split(","))
    spec = json.loads((path / "spec.json").read_text())
    with chdir(workdir):  # the estimate reads the description
        assert megabytes(granted["mem"]) == estimate_mem_mb(spec) * 2
