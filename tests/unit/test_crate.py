"""A run as a Workflow Run RO-Crate (snnbench.results.crate): what the crate says of each point, its inputs,
its environment and the workflow, on synthetic records written by snnbench.dev.synthetic; and, where the
checker's environment is made (make env-rocrate-validator), roc-validator's verdict on it without a network."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
from conftest import check_crates
from snnbench import hashing, planning
from snnbench.dev import synthetic
from snnbench.results import crate

EXPERIMENT = synthetic.experiment(name="shared", threads=(1, 2), seeds=(1,))
SPECS = planning.expand_points(EXPERIMENT)
FAILED = SPECS[1]["path"]
RULE = "execute_point_pd14"


def ids(value) -> list[str]:
    """The @ids a property refers to (one reference or a list of them)."""
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def edit_record(point: str, change) -> dict:
    path = Path(point) / "record.json"
    rec = json.loads(path.read_text())
    change(rec)
    path.write_text(json.dumps(rec))
    return rec


@pytest.fixture
def written(tmp_path, monkeypatch):
    """Two synthetic points (one failed) in a working directory with a workflow and a config; the first
    point read two input files (one still here as it was read, one changed since), the second ran with
    other packages. Returns the crate's graph by @id and the run."""
    monkeypatch.chdir(tmp_path)
    files = synthetic.write_experiment(tmp_path, EXPERIMENT, failed=[FAILED])
    (tmp_path / "workflow/rules").mkdir(parents=True)
    Path("Snakefile").write_text('include: "workflow/rules/execute.smk"\n')
    Path("workflow/rules/execute.smk").write_text("rule execute_point_pd14:\n    output: 'x'\n")
    Path("config").mkdir()
    Path("config/config.yaml").write_text("experiments: []\n")
    Path("results/shared/points.csv").write_text("path,status\n" + "".join(f"{s['path']},ok\n" for s in SPECS))
    Path("networks").mkdir()
    Path("networks/kept.h5").write_bytes(b"network description")
    Path("networks/changed.h5").write_bytes(b"changed since")
    inputs = {"networks/kept.h5": hashing.file_sha256(Path("networks/kept.h5")), "networks/changed.h5": "0" * 64}
    first = edit_record(SPECS[0]["path"], lambda r: r["provenance"].setdefault("identity", {}).update(inputs=inputs))
    edit_record(FAILED, lambda r: r["provenance"].update(packages={"nest-simulator": "3.9"}))
    run = crate.Run(
        experiment="shared",
        files=[str(p.relative_to(tmp_path)) for kind in files.values() for p in kind]
        + [f"{spec['path']}/spec.json" for spec in SPECS]
        + ["results/shared/points.csv"],
        workflow_files=[str(tmp_path / "Snakefile"), "workflow/rules/execute.smk"],
        configfiles=["config/config.yaml"],
        execute_rule=RULE,
        outputs=["record.json", "spikes.npz"],
    )
    held = crate.write(tmp_path / "results/crates/shared", run, "CC-BY-4.0")
    metadata = json.loads((tmp_path / "results/crates/shared/ro-crate-metadata.json").read_text())
    return {e["@id"]: e for e in metadata["@graph"]}, held, first


def test_each_point_is_one_execution_of_the_execute_rule(written):
    graph, held, first = written
    for spec in SPECS:
        point = spec["path"]
        action = graph[f"#{RULE}/{point}"]
        rec = json.loads(Path(point, "record.json").read_text())
        assert action["@type"] == "CreateAction" and graph[action["instrument"]["@id"]]["name"] == RULE
        assert f"{point}/spec.json" in ids(action["object"])
        assert {f"{point}/record.json", f"benchmarks/execute/{point.removeprefix('results/')}.tsv"} <= set(
            ids(action["result"])
        )
        assert action["startTime"] == rec["provenance"]["started_utc"]
        end = datetime.datetime.fromisoformat(action["endTime"]) - datetime.datetime.fromisoformat(action["startTime"])
        assert end.total_seconds() == pytest.approx(rec["wall_time_s"], abs=1)
        usage = {graph[i]["propertyID"]: graph[i] for i in ids(action["resourceUsage"])}
        assert float(usage["urn:snnbench:snakemake-benchmark/max_rss"]["value"]) == 400.0
        control = graph[f"#control/{RULE}/{point}"]
        assert control["@type"] == "ControlAction" and ids(control["object"]) == [action["@id"]]
        assert ids(control["instrument"]) == [f"#step/{RULE}"]
        assert control["@id"] in ids(graph["#snakemake-run"]["object"])
    failed = graph[f"#{RULE}/{FAILED}"]
    assert failed["actionStatus"] == "http://schema.org/FailedActionStatus" and failed["error"].startswith("failed: ")
    ok = graph[f"#{RULE}/{SPECS[0]['path']}"]
    assert ok["actionStatus"] == "http://schema.org/CompletedActionStatus" and "error" not in ok
    assert held["by_type"]["ControlAction"] == len(SPECS) == held["by_type"]["CreateAction"] - 1


def test_inputs_files_and_environments_carry_their_digests(written):
    graph, _, first = written
    action = graph[f"#{RULE}/{SPECS[0]['path']}"]
    objects = {graph[i].get("name"): graph[i] for i in ids(action["object"])}
    kept = objects["kept.h5"]
    assert kept["@type"] == "File" and kept["sha256"] == first["provenance"]["identity"]["inputs"]["networks/kept.h5"]
    assert Path("results/crates/shared/networks/kept.h5").read_bytes() == b"network description"
    changed = objects["networks/changed.h5"]  # not what the point read: its recorded digest alone
    assert changed["@type"] == "CreativeWork" and changed["sha256"] == "0" * 64
    for entity in graph.values():
        if entity["@type"] == "File" and "sha256" in entity:
            assert hashing.file_sha256(Path("results/crates/shared", entity["@id"])) == entity["sha256"], entity["@id"]
    # Two environments (the failed point ran with other packages): two tools, one step that either implements.
    tools = ids(graph["Snakefile"]["hasPart"])
    assert len(tools) == 2 and sorted(ids(graph[f"#step/{RULE}"]["workExample"])) == sorted(tools)
    requirements = {i for tool in tools for i in ids(graph[tool]["softwareRequirements"])}
    assert "https://pypi.org/project/nest-simulator/3.9/" in requirements


def test_the_workflow_config_and_license(written):
    graph, _, _ = written
    root = graph["./"]
    assert "https://w3id.org/ro/wfrun/provenance/0.5" in ids(root["conformsTo"])
    assert ids(root["mainEntity"]) == ["Snakefile"] and ids(root["license"]) == ["https://spdx.org/licenses/CC-BY-4.0"]
    workflow = graph["Snakefile"]
    assert set(workflow["@type"]) == {"File", "SoftwareSourceCode", "ComputationalWorkflow", "HowTo"}
    assert "workflow/rules/execute.smk" in graph and "config/config.yaml" in graph
    run = graph["#workflow-run"]
    assert ids(run["instrument"]) == ["Snakefile"] and ids(run["object"]) == ["config/config.yaml"]
    assert ids(run["result"]) == ["results/shared/points.csv"]
    assert ids(graph[ids(workflow["output"])[0]]["workExample"]) == ["results/shared/points.csv"]
    assert ids(graph["#snakemake-run"]["result"]) == ["#workflow-run"]


def test_validator_finds_no_required_issue_offline(written, tmp_path):
    [report] = check_crates([tmp_path / "results/crates/shared"])
    assert (report["profile"], report["severity"], report["issues"], report["passed"]) == (
        "provenance-run-crate-0.5",
        "REQUIRED",
        [],
        True,
    )
