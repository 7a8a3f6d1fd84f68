"""profiles/slurm on the test cluster (tests/slurm/cluster.sh) with compute nodes that cannot reach PyPI, as at
many sites: the jobs' environment has PIP_NO_INDEX=1, no pip configuration, no local wheel folder and an unusable
proxy (Snakemake's --precommand runs in each job before the rule; the head keeps its own environment). A point of
a simulator whose environment is not yet in the cache (a plugin's, made in a fresh cache folder) still runs: the
head made the environment before submitting the point, and SLURM ran nothing but the point."""

from __future__ import annotations

import json
import platform
import re
import subprocess

import pytest
import yaml
from conftest import TINY, copy_workflow, plugin_environment
from snnbench import environments
from test_slurm import (  # noqa: F401 (the fixtures cluster and shared_dir)
    cluster,
    remove,
    sacct,
    sacct_state,
    shared_dir,
    slurm_snakemake,
    snakemake_bin,
)

pytestmark = pytest.mark.slow

# What a job sees instead of PyPI: no index, no pip.conf (its extra index and find-links), no wheel folder, and a
# proxy on the discard port. (No quotes: the plugin passes the command to sbatch --wrap.)
UNREACHABLE = "http://127.0.0.1:9"
OFFLINE = (
    "unset PIP_FIND_LINKS PIP_EXTRA_INDEX_URL && export PIP_NO_INDEX=1 PIP_CONFIG_FILE=/dev/null "
    f"PIP_INDEX_URL={UNREACHABLE}/simple HTTPS_PROXY={UNREACHABLE} HTTP_PROXY={UNREACHABLE} "
    f"https_proxy={UNREACHABLE} http_proxy={UNREACHABLE}"
)
# The Poisson stand-in of tests/simulators/poisson_plugin.py under a name of its own, with an environment of its
# own: its link in the checkout (.venv-offline-pd14) is this test's alone, and goes with it.
NAME = "offline-pd14"
PLUGIN = f"""import dataclasses
from poisson_plugin import SIMULATOR as POISSON
SIMULATOR = dataclasses.replace(POISSON, environment="{NAME}")
"""
ENVIRONMENT = (
    "# The offline test's environment (tests/e2e/test_slurm_offline.py): numpy alone.\n"
    "channels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n      - numpy==2.4.6\n"
)


@pytest.fixture(scope="module")
def offline_run(cluster, shared_dir):  # noqa: F811 (the fixtures imported above)
    workdir = copy_workflow(shared_dir("offline"))
    plugins = workdir / "tests" / "simulators"
    (plugins / "offline_plugin.py").write_text(PLUGIN)
    (plugins / "offline-envs").mkdir()
    (plugins / "offline-envs" / f"{NAME}.yaml").write_text(ENVIRONMENT)
    cache = workdir.parent / "envs"  # a cache folder the nodes see, without this environment
    experiment = dict(TINY, name="offline", simulators=[NAME], resources={"threads_per_rank": [1]}, seeds=[1, 2])
    (workdir / "config" / "offline.yaml").write_text(yaml.safe_dump({"experiments": [experiment]}))
    env = plugin_environment(
        workdir,
        "simulators",
        SNNBENCH_NETWORK_SIMULATORS=f"{NAME}=offline_plugin:SIMULATOR",
        SNNBENCH_ENVIRONMENTS=str(plugins / "offline-envs"),
        SNNBENCH_ENV_CACHE=str(cache),
    )
    # Its link in the checkout Snakemake runs from (a clone in /tmp: the shared one) stands on the cache folder,
    # which goes: removed after the run, and before it where an earlier run left it.
    linked = environments.linked(NAME, snakemake_bin().parents[2])
    remove(linked)
    try:
        proc = slurm_snakemake(workdir, "config/offline.yaml", "--precommand", OFFLINE, env=env)
        yield workdir, cache, proc
    finally:
        remove(linked)


def test_points_run_on_nodes_without_pypi(offline_run):
    workdir, _, _ = offline_run
    records = [json.loads(p.read_text()) for p in sorted(workdir.glob(f"results/offline/{NAME}/*/*/seed*/record.json"))]
    assert len(records) == 2
    for rec in records:
        assert rec["status"] == "ok", rec.get("failure")
        job = rec["provenance"]["slurm"]["job_id"]
        assert sacct_state(job) == "COMPLETED" and rec["ranks"][0]["host"] in ("n1", "n2")
        # The job's own script: the rule ran after the variables that keep pip off the network.
        script = subprocess.run(["scontrol", "write", "batch_script", job, "-"], capture_output=True, text=True)
        assert "PIP_NO_INDEX=1" in script.stdout and f"HTTPS_PROXY={UNREACHABLE}" in script.stdout, script


def test_the_environment_was_made_by_the_head_before_the_points(offline_run):
    workdir, cache, proc = offline_run
    (made,) = cache.glob("*/build.json")
    info = json.loads(made.read_text())
    assert info["host"] == platform.node() and info["build"]["environment"] == NAME  # the head, not n1 or n2
    log = (workdir / "logs" / "build" / f"{info['key']}.log").read_text()
    assert f"environment {NAME}" in log and "made in" in log
    # SLURM ran only the points: no build job among this run's jobs (all of one job name, the run's id).
    assert not (workdir / ".snakemake" / "slurm_logs" / "rule_build_environment").exists()
    records = list(workdir.glob(f"results/offline/{NAME}/*/*/seed*/record.json"))
    points = sorted(json.loads(p.read_text())["provenance"]["slurm"]["job_id"] for p in records)
    run_name = sacct(points[0], "JobName")
    listed = subprocess.run(
        ["sacct", "-X", "-n", "-P", "--name", run_name, "-o", "JobID"], capture_output=True, text=True
    )
    assert sorted(listed.stdout.split()) == points
    # The head's log: the build started (locally) before the first job was submitted.
    out = proc.stdout + proc.stderr
    assert re.search(r"rule build_environment:", out).start() < out.index("has been submitted with SLURM jobid")
