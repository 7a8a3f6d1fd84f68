"""What a point's SLURM job asks beyond its shape (config slurm: exclusive, threads_per_core, extra),
the points a partition cannot hold so, and what the job got, read back (snnbench.planning.slurm_request,
snnbench.records.slurm_grant). On the test cluster: tests/e2e/test_slurm_grants.py."""

import json
import subprocess

import pytest
from conftest import config_problems, experiment, validated
from snnbench import planning
from snnbench.planning import before_jobs, slurm_request
from snnbench.planning.experiments import expand_points
from snnbench.records import slurm_grant
from snnbench.records.columns import outcome_columns
from snnbench.tables import onerror

# sinfo's nodes as partition_nodes() reads them: a 2-core node, and one core of 2 hardware threads.
SINFO = "debug*|n1|2|2|1|1\nsmt|n3|2|1|1|2\n"


def fake_run(outputs: dict):
    """subprocess.run answering each command (by its first two words) with its text."""

    def run(argv, **_):
        return subprocess.CompletedProcess(argv, 0, stdout=outputs.get(" ".join(argv[:2]), ""), stderr="")

    return run


def test_network_points_ask_whole_nodes_by_default_and_the_config_says_otherwise():
    config = validated(experiment(), experiment(name="mine", slurm={"exclusive": False, "threads_per_core": 1}))
    network, mine = config["experiments"]
    assert slurm_request.asked(config, network) == {"exclusive": True, "threads_per_core": None, "extra": ""}
    assert slurm_request.sbatch_flags(slurm_request.asked(config, network)) == "--exclusive"
    asked = slurm_request.asked(config, mine)
    assert slurm_request.sbatch_flags(asked) == "--threads-per-core=1"
    config["slurm"] = {"extra": "--reservation=bench"}
    asked = slurm_request.asked(config, network)
    assert slurm_request.sbatch_flags(asked) == "--exclusive --reservation=bench"


def test_training_points_share_nodes_unless_asked():
    training = {"name": "train", "model": "snn-training", "seeds": [1]}
    assert slurm_request.asked({"slurm": {}}, training)["exclusive"] is False
    assert slurm_request.asked({"slurm": {"exclusive": True}}, training)["exclusive"] is True


def test_extra_flags_that_a_key_or_the_plugin_owns_are_refused():
    assert config_problems(experiment(), slurm={"extra": "--mail-type=FAIL --reservation=x"}) == []
    [line] = config_problems(experiment(), slurm={"extra": "--exclusive"})
    assert line == "slurm.extra: --exclusive is set by the key slurm.exclusive, not by extra"
    [line] = config_problems(experiment(slurm={"extra": "--hint=nomultithread"}))
    assert line == "experiments[0] (unit): slurm.extra: --hint is set by the key slurm.threads_per_core, not by extra"
    [line] = config_problems(experiment(), slurm={"extra": "--mem=4G"})
    assert line.startswith("slurm.extra: the executor plugin sets the memory itself")
    [line] = config_problems(experiment(), slurm={"exclusive": "yes"})
    assert "slurm.exclusive" in line and "boolean" in line


def test_a_point_that_no_node_holds_at_one_thread_per_core_is_named():
    nodes = slurm_request.partition_nodes(fake_run({"sinfo -h": SINFO}))
    assert [n["partition"] for n in nodes] == ["debug", "smt"] and nodes[0]["default"]
    config = validated(experiment(slurm={"partition": "smt", "threads_per_core": 1}), experiment(name="shared"))
    points = {spec["path"]: spec for exp in config["experiments"] for spec in expand_points(exp)}
    experiments = {e["name"]: e for e in config["experiments"]}
    [line] = slurm_request.unplaceable(points, config, experiments, nodes)
    assert line == (
        "results/unit/nest/nodes1_ranks1_threads2/N0.02_K0.1/seed1: needs 2 CPUs on each of 1 node(s) at 1 "
        "thread(s) per core (slurm.threads_per_core), but partition smt has 0 such node(s): the largest, n3, has "
        "1 usable (1 socket(s) x 1 core(s) x 2 thread(s), sinfo)"
    )
    campaign = planning.plan(config)
    with pytest.raises(
        before_jobs.CannotRun, match=r"(?s)can hold these points as asked:\n  results/unit/.*Nothing was run"
    ):
        before_jobs.refuse_unplaceable_on_slurm(campaign, points, nodes)
    # Where sinfo cannot tell (not a SLURM host), nothing is refused: SLURM judges.
    assert slurm_request.partition_nodes(lambda *a, **k: subprocess.CompletedProcess(a, 1, "", "")) is None
    assert slurm_request.unplaceable(points, config, experiments, []) == []


# scontrol show job -o of a 1-thread job at one thread per core on the SMT node, and of that node.
SCONTROL_JOB = "JobId=7 NumNodes=1 NumCPUs=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:1 OverSubscribe=OK NodeList=n3 Partition=smt"
SCONTROL_NODE = "NodeName=n3 CoresPerSocket=1 Sockets=1 ThreadsPerCore=2 CPUTot=2\n"


def test_granted_reads_back_one_core_of_an_smt_node_and_names_what_differs():
    job = dict(item.split("=", 1) for item in SCONTROL_JOB.split())
    run = fake_run({"scontrol show": SCONTROL_NODE, "squeue -h": "7\n9\n"})
    granted = slurm_grant.granted("7", job, environ={}, run=run)
    assert granted == {
        "nodes": 1,
        "node_list": "n3",
        "cpus": 2,
        "cpus_per_task": 1,
        "cores": 1,
        "oversubscribe": "OK",
        "shared": True,
        "other_jobs": ["9"],
        "node_sockets": 1,
        "node_cores_per_socket": 1,
        "node_threads_per_core": 2,
        "threads_per_core": 1,
    }
    problems = slurm_grant.grant_problems
    assert problems({"exclusive": False, "threads_per_core": 1}, granted) == ""
    assert problems({"exclusive": True, "threads_per_core": 1}, granted) == "shared node (jobs 9 on it)"
    alone = dict(granted, oversubscribe="NO", shared=False, other_jobs=[], threads_per_core=2)
    assert problems({"exclusive": True, "threads_per_core": 1}, alone) == "2 threads per core"
    assert (
        problems({"exclusive": True, "threads_per_core": None}, dict(alone, shared=None))
        == "node sharing not read back"
    )
    assert problems(None, granted) == "" and problems({"exclusive": True}, None) == ""


@pytest.mark.parametrize("slurm", [None, {"job_id": "7"}])
def test_every_row_has_the_grant_problems_column(slurm):
    prov = {
        "host": {"hostname": "h", "cpu_model": "c", "load_average_1_5_15": [0, 0, 0]},
        "workflow": {"git_commit": None, "git_dirty": None},
        "benchmark_hash": None,
        "started_utc": "2026-11-28T00:00:00+00:00",
        "slurm": slurm,
        "machine": {"name": "h"},
    }
    row = outcome_columns({"provenance": prov, "status": "ok", "failure": None, "wall_time_s": 1.0})
    assert row["slurm_grant_problems"] == ""


def test_a_job_slurm_refused_at_submission_gets_a_failed_record_naming_why(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = validated(experiment(resources={"threads_per_rank": [2]}))
    points = {spec["path"]: spec for spec in expand_points(config["experiments"][0])}
    [path] = points
    log = tmp_path / "run.snakemake.log"
    log.write_text(
        "Error in rule execute_point_pd14:\n"
        "    message: SLURM sbatch failed. The error message was 'sbatch: error: Batch job submission failed: "
        "Requested node configuration is not available'.\n"
        "    sbatch call:\n        sbatch --parsable --threads-per-core=1\n"
        "For further error details see the cluster/cloud log and the log files of the involved rule(s).\n"
        "    jobid: 8\n"
        f"    output: {path}/record.json, {path}/spikes.npz\n"
    )
    [line] = onerror.record_refused_jobs(points, [str(log)])
    assert line.startswith(f"{path}/record.json: SLURM refused its job (sbatch: error:")
    rec = json.loads((tmp_path / path / "record.json").read_text())
    assert rec["status"] == "failed" and rec["wall_time_s"] is None
    assert rec["failure"]["reason"] == (
        "SLURM refused the point's job at submission: sbatch: error: Batch job submission failed: Requested node "
        f"configuration is not available (its sbatch call: {log})"
    )
    assert list(onerror.record_refused_jobs(points, [str(log)])) == []  # a record on disk is left alone
