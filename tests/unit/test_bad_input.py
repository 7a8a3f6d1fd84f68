"""Bad input is refused before any job with a short message naming the file, the key and what is
allowed; damaged results are named and recomputed, never silently used (issue: bad input)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import config_problems, experiment, snakemake, validated
from snnbench import jsonfile, planning
from snnbench.network import references
from snnbench.planning import check
from snnbench.tables.failed import failed_records


@pytest.mark.parametrize(
    "change, key, allowed",
    [
        (lambda e: e.update(seeds=[55.0]), "experiments[0].seeds[0]", "integer"),
        (lambda e: e["resources"].update(threads_per_rank=[1.0, 2]), "threads_per_rank[0]", "integer"),
        (lambda e: e["pd14"].update(t_sim_ms=0.15), "pd14.t_sim_ms", "multiple of the resolution 0.1 ms"),
        (lambda e: e["pd14"].update(t_sim_ms=0.05), "pd14.t_sim_ms", "multiple of the resolution 0.1 ms"),
        (lambda e: e["pd14"].update(t_presim_ms=0.05), "pd14.t_presim_ms", "multiple of the resolution 0.1 ms"),
        (lambda e: e["pd14"].update(neuron_scale=1e-5), "pd14.neuron_scale", "9.39e-04"),
        (lambda e: e.update(simulators=["nest", "nest"]), "simulators", "must not repeat"),
        (lambda e: e.pop("seeds"), "experiments[0]", "'seeds' is a required property"),
        (lambda e: e["pd14"].update(neuron_scale_per_vp=0.1), "experiments[0].pd14", "neuron_scale_per_vp"),
        (lambda e: e.update(scaling="fast"), "experiments[0].scaling", "'strong', 'weak'"),
    ],
)
def test_refused_with_the_key_and_what_is_allowed(change, key, allowed):
    exp = experiment()
    change(exp)
    found = config_problems(exp)
    assert found, "accepted"
    assert key in found[0] and allowed in found[0], found
    assert len(found) <= 5 and all(len(line) < 400 for line in found)


def test_unknown_top_level_key_lists_the_allowed_keys_in_one_line():
    found = config_problems(experiment(), figurse={})
    assert found[0].startswith("(top level)") and "'figurse' was unexpected" in found[0]
    assert "allowed keys: experiments" in found[0] and len(found) == 1


def test_upscaled_models_are_allowed():
    """Above 1 the model grows beyond the full one (weak scaling on many VPs reaches it)."""
    assert config_problems(experiment(pd14=dict(experiment()["pd14"], neuron_scale=1.5))) == []


def test_workflow_names_the_config_file_before_any_job(workflow_copy):
    bad = copy.deepcopy({"experiments": [experiment(seeds=[55.0])]})
    (workflow_copy / "config" / "bad.yaml").write_text(yaml.safe_dump(bad))
    proc = snakemake(workflow_copy, "--configfile", "config/bad.yaml", "--dry-run", check=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    message = output[output.index("Error in config") :]
    assert "config/bad.yaml" in message and "experiments[0].seeds[0]" in message and "integer" in message
    assert len(message.splitlines()) < 10
    assert not (workflow_copy / "results" / "unit").exists()


def test_planning_is_linear_in_seeds():
    """Each point's validation waits on a bounded number of its seed peers, not on all of them."""
    specs = planning.expand_points(validated(experiment(seeds=list(range(1, 501))))["experiments"][0])
    peers = references.seed_peer_index(specs, max_peers=4)
    assert all(len(p) == 4 and len(set(p)) == 4 for p in peers.values())
    assert all(path not in p for path, p in peers.items())
    assert sum(map(len, peers.values())) == 4 * len(specs)


def test_damaged_record_is_named_set_aside_and_counted_as_failed(tmp_path):
    point = tmp_path / "results/x/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    point.mkdir(parents=True)
    record = point / "record.json"
    record.write_text(json.dumps({"status": "ok", "point": {}}, indent=1)[:20])
    with pytest.raises(jsonfile.DamagedFile, match=str(record)):
        jsonfile.read_json(record)
    assert failed_records(tmp_path / "results") == [record]  # make rerun-failed reruns it
    assert jsonfile.set_aside_damaged([record], dry_run=True) and record.exists()
    lines = jsonfile.set_aside_damaged([record], dry_run=False)
    assert lines[0][0] == str(record) and str(record) in lines[0][1]
    assert not record.exists() and (point / "record.json.damaged").exists()


def test_a_job_the_executor_starts_leaves_records_and_folders_to_the_planning_host(workflow_copy):
    """A job (Snakemake's --mode remote, as SLURM starts it) reads the workflow again but neither sets
    damaged records aside nor refuses unwritable folders: that is done once, by the main process."""
    (workflow_copy / "config" / "unit.yaml").write_text(yaml.safe_dump({"experiments": [experiment()]}))
    damaged = workflow_copy / "results/unit/nest/nodes1_ranks1_threads2/N0.02_K0.1/seed1/record.json"
    damaged.parent.mkdir(parents=True)
    damaged.write_text('{"status": "o')
    (workflow_copy / "benchmarks").write_text("")  # a file in the way of every point's benchmark
    job = "configure_point:experiment=unit,point=nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    mode = [
        "--mode",
        "remote",
        "--target-jobs",
        job,
        "--allowed-rules",
        "configure_point",
        "--force",
        "--nolock",
        "-c1",
    ]
    proc = snakemake(workflow_copy, "--configfile", "config/unit.yaml", *mode, check=False)
    output = proc.stdout + proc.stderr
    assert "damaged" not in output and "Cannot write" not in output, output[-2000:]
    assert damaged.read_text() == '{"status": "o'
    assert (workflow_copy / "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1/spec.json").exists(), output[
        -3000:
    ]
    proc = snakemake(workflow_copy, "--configfile", "config/unit.yaml", "--dry-run", check=False)
    output = proc.stdout + proc.stderr  # the main process names the damaged record, then refuses
    assert proc.returncode != 0 and "would be set aside" in output and "Cannot write" in output, output[-2000:]


@pytest.mark.parametrize("block", ["immutable folder", "file in the way"])
def test_unwritable_point_folder_is_refused_before_any_job(workflow_copy, block):
    """A point that could not write its results would fail after the others ran and hold back its
    experiment's tables: refused at planning, naming the folder."""
    (workflow_copy / "config" / "unit.yaml").write_text(yaml.safe_dump({"experiments": [experiment()]}))
    folder = workflow_copy / "results/unit/nest/nodes1_ranks1_threads2"
    if block == "immutable folder":
        folder.mkdir(parents=True)
        if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i needs root and a file system with inode flags (ext4, xfs, btrfs)")
    else:
        folder.parent.mkdir(parents=True)
        folder.write_text("")
    try:
        proc = snakemake(workflow_copy, "--configfile", "config/unit.yaml", check=False)
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Cannot write where points of this run write" in output, output[-2000:]
    assert "results/unit/nest/nodes1_ranks1_threads2" in output
    assert not list((workflow_copy / "results/unit").rglob("spec.json"))  # nothing ran


@pytest.mark.parametrize(
    "text, says",
    [
        ("", "config/bad.yaml: empty; a config file is a mapping of keys"),
        ("- a\n- b\n", "config/bad.yaml: the top level is a list, not a mapping of keys"),
        ("experiments:\n  - name: x\n   bad: [\n", "config/bad.yaml, line 3, column 4: not valid YAML"),
    ],
)
def test_unreadable_config_file_is_named_with_its_line(workflow_copy, monkeypatch, capsys, text, says):
    monkeypatch.chdir(workflow_copy)
    Path("config/bad.yaml").write_text(text)
    # Given with --configfile, Snakemake reads it before the workflow: the checker names it.
    assert check.main(["config/bad.yaml"]) == 1
    assert capsys.readouterr().out.startswith(says)
    # As the workflow's own config file, the workflow names it before any job.
    Path("config/config.yaml").write_text(text)
    proc = snakemake(workflow_copy, "--dry-run", check=False)
    assert proc.returncode != 0 and says.replace("bad.yaml", "config.yaml") in proc.stdout + proc.stderr


def test_files_of_the_wrong_shape_are_named_and_set_aside(tmp_path, monkeypatch):
    """JSON that parses but is not of its kind (a record the schema refuses, another point's spec,
    a validation result without its rows) is named with what is wrong and set aside like a file
    cut short; a file of the right shape stays."""
    import numpy as np
    from snnbench import planning
    from snnbench.dev.synthetic import make_record
    from snnbench.planning import before_jobs

    monkeypatch.chdir(tmp_path)
    campaign = planning.plan({"experiments": [experiment()]})
    first, second = campaign.points
    good = make_record(campaign.points[second], np.random.default_rng(1))
    files = {
        f"{first}/record.json": {"hello": "world"},
        f"{first}/spec.json": campaign.points[second],
        f"{first}/validation.json": {"checked": True},
        f"{second}/record.json": good,
        f"{second}/spec.json": campaign.points[second],
    }
    for path, content in files.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(content))
    lines = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
    assert len(lines) == 3
    record, spec, result = sorted(
        lines, key=lambda line: ["record", "spec", "validation"].index(Path(line.split()[0]).stem)
    )
    assert record.startswith(f"{first}/record.json is not what it should be (")
    assert "(no schema_version, point, status, failure, provenance, wall_time_s, see record.schema.yaml)" in record
    assert spec.startswith(f"{first}/spec.json is not what it should be (its path is '{second}'")
    assert result.startswith(f"{first}/validation.json is not what it should be (no rows)")
    assert all("set aside as" in line for line in lines)
    assert spec.endswith("set aside as spec.json.damaged, written again from the plan")
    assert sorted(p.name for p in Path(first).iterdir()) == [
        "record.json.damaged",
        "spec.json",  # the plan, as configure_point writes it (a finished job's missing input is not remade)
        "spec.json.damaged",
        "validation.json.damaged",
    ]
    assert json.loads(Path(first, "spec.json").read_text()) == campaign.points[first]
    assert sorted(p.name for p in Path(second).iterdir()) == ["record.json", "spec.json"]


def test_node_local_paths_are_named():
    from snnbench.planning.before_jobs import CannotRun, refuse_node_local

    needed = {"the results folder": "/scratch/tmpx/results", "the working directory": "/tmp/wf"}
    with pytest.raises(CannotRun) as refused:
        refuse_node_local(needed, ["/tmp", "/local"])
    assert "  the working directory: /tmp/wf" in str(refused.value)
    assert "results" not in str(refused.value) and "slurm.node_local_paths" in str(refused.value)
    refuse_node_local({"the working directory": "/tmpfs/wf", "the results folder": "/work/r"}, ["/tmp"])


def test_a_cluster_run_from_a_node_local_folder_is_refused_even_dry(workflow_copy):
    """The cluster's nodes have their own /tmp: a SLURM run from a workflow under it is refused
    before any job, in a dry run too; the local profile runs there."""
    (workflow_copy / "config" / "unit.yaml").write_text(yaml.safe_dump({"experiments": [experiment()]}))
    snakemake_bin = Path(sys.executable).parent / "snakemake"
    command = [str(snakemake_bin), "--configfile", "config/unit.yaml", "-n"]
    proc = subprocess.run([*command, "--profile", "profiles/slurm"], cwd=workflow_copy, capture_output=True, text=True)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert f"the working directory: {workflow_copy}" in output, output[-3000:]
    assert "config key slurm.node_local_paths" in output
    local = subprocess.run([*command, "--profile", "profiles/local"], cwd=workflow_copy, capture_output=True, text=True)
    assert local.returncode == 0, local.stderr[-2000:]


def hpc_experiment(**block) -> dict:
    exp = experiment(model="hpc_benchmark", hpc_benchmark={"neuron_scale": 0.1, "indegree_scale": 0.1, **block})
    exp.pop("pd14")
    return exp


def test_a_race_block_for_a_model_without_a_race_is_refused_naming_the_key():
    found = config_problems({**hpc_experiment(), "race": {"recipe": "accuracy"}})
    assert found == [
        "experiments[0] (unit): race: model hpc_benchmark has no community race (a race recipe and living table); "
        "models with one: pd14"
    ]


def test_an_hpc_benchmark_population_of_one_neuron_is_refused():
    """At neuron_scale 0.0001 a population rounded up to one neuron drew its in-degree from itself
    without autapses: NEST searched for ever. The smallest scale allowed gives two neurons in each."""
    (found,) = config_problems(hpc_experiment(neuron_scale=0.0001))
    assert found.startswith("experiments[0] (unit): hpc_benchmark.neuron_scale gives populations of fewer than 2")
    assert "{'E': 1, 'I': 0}" in found and "the smallest neuron scale allowed is 8.89e-04" in found
    assert config_problems(hpc_experiment(neuron_scale=8.89e-4)) == []
    weak = hpc_experiment(neuron_scale_per_vp=0.0002)
    weak["hpc_benchmark"].pop("neuron_scale")
    (found,) = config_problems({**weak, "scaling": "weak"})
    assert "hpc_benchmark.neuron_scale_per_vp gives populations of fewer than 2" in found


def test_a_record_whose_population_statistic_has_the_wrong_type_is_set_aside_not_judged(tmp_path, monkeypatch):
    """collect judges activity from a record's populations: a rate edited to a string is named (file, key, what is
    allowed) and the record set aside before any job, never a traceback at collect."""
    import numpy as np
    from snnbench import planning
    from snnbench.dev.synthetic import make_record
    from snnbench.planning import before_jobs

    monkeypatch.chdir(tmp_path)
    campaign = planning.plan({"experiments": [experiment()]})
    point = next(iter(campaign.points))
    rec = make_record(campaign.points[point], np.random.default_rng(1))
    rec["populations"][2]["rate_hz"] = "fast"
    Path(point).mkdir(parents=True)
    Path(point, "spec.json").write_text(json.dumps(campaign.points[point]))
    Path(point, "record.json").write_text(json.dumps(rec))
    [line] = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
    assert line.startswith(f"{point}/record.json is not what it should be ('fast' is not of type 'number'")
    assert "at populations/2/rate_hz, see record.schema.yaml" in line and "set aside as" in line
    assert Path(point, "record.json.damaged").exists() and not Path(point, "record.json").exists()
