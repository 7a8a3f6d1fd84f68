"""End to end: the real workflow (Snakemake + NEST) on tiny PD14 points.

One run makes two experiments: `tiny` (1 and 2 threads) and `tiny-timeout`, whose point cannot
finish in its time limit and must be recorded as failed while the others complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import DEFAULT_FIGURES, REPO, TINY, VENV_BIN, check_crates, per_population, snakemake
from snnbench import figures, hashing, paths
from snnbench.network import validation
from snnbench.network.models import pd14
from snnbench.tables.failed import failed_records

pytestmark = pytest.mark.slow

CONFIG = {
    "experiments": [
        dict(TINY, name="tiny", resources={"threads_per_rank": [1, 2]}),
        dict(
            TINY,
            name="tiny-timeout",
            resources={"threads_per_rank": [1]},
            pd14=dict(TINY["pd14"], t_sim_ms=200_000),
            time_limit_min=0.05,  # 3 s: far too short for 200 s of model time
        ),
    ]
}
OK_POINTS = [f"results/tiny/nest/nodes1_ranks1_threads{t}/N0.02_K0.1/seed1" for t in (1, 2)]
FAILED_POINT = "results/tiny-timeout/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"


def write_config(workdir: Path, config: dict, name="test.yaml") -> str:
    path = workdir / "config" / name
    path.write_text(yaml.safe_dump(config))
    return f"config/{name}"


def mtimes(workdir: Path, pattern: str) -> dict[str, int]:
    return {str(p.relative_to(workdir)): p.stat().st_mtime_ns for p in workdir.glob(pattern)}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    import shutil

    from conftest import REPO

    workdir = tmp_path_factory.mktemp("e2e") / "snnbench"
    shutil.copytree(REPO, workdir, ignore=paths.copy_ignore(REPO))
    configfile = write_config(workdir, CONFIG)
    proc = snakemake(workdir, "--configfile", configfile)
    return workdir, configfile, proc


def test_records_tables_and_figures(finished):
    workdir, _, _ = finished
    for point in OK_POINTS:
        rec = json.loads((workdir / point / "record.json").read_text())
        assert rec["status"] == "ok", rec["failure"]
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] > 0
        assert set(per_population(rec, "rate_hz")) == set(pd14.POPULATIONS)
        assert rec["simulator"]["name"] == "nest" and rec["provenance"]["packages"]["nest-simulator"]
        assert (workdir / point / "spec.json").exists() and (workdir / point / "spikes.npz").exists()
    threads = [json.loads((workdir / p / "record.json").read_text())["ranks"][0]["threads"] for p in OK_POINTS]
    assert threads == [1, 2]

    failed = json.loads((workdir / FAILED_POINT / "record.json").read_text())
    assert failed["status"] == "failed"
    assert "exceeded its time limit of 3 s" in failed["failure"]["reason"]

    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert list(points["vps"]) == [1, 2]
    assert (points["status"] == "ok").all() and points["valid"].all()
    assert (points["num_synapses"] == points["expected_synapses"]).all()
    assert points["job_wall_s"].notna().all()  # Snakemake's benchmark, the second timing source
    assert points.loc[0, "efficiency"] == pytest.approx(1.0)
    ranks = pd.read_csv(workdir / "results/tiny/ranks.csv")
    assert len(ranks) == 2 and set(ranks["rank"]) == {0}

    timeout = pd.read_csv(workdir / "results/tiny-timeout/points.csv")
    assert list(timeout["status"]) == ["failed"] and not timeout["valid"].any()
    assert "time limit" in timeout.loc[0, "failure_reason"]
    everything = pd.read_csv(workdir / "results/points.csv")
    assert sorted(everything["experiment"]) == ["tiny", "tiny", "tiny-timeout"]

    for experiment in ("tiny", "tiny-timeout"):
        for name in DEFAULT_FIGURES:
            for ext in ("png", "pdf"):
                path = workdir / f"results/{experiment}/figures/{name}.{ext}"
                assert path.stat().st_size > 1000, path
        assert (workdir / f"results/{experiment}/provenance.html").stat().st_size > 1000


def test_validation_of_recorded_spikes(finished):
    workdir, _, _ = finished
    reference = OK_POINTS[0]  # the fewest VPs, lowest seed
    for point in OK_POINTS:
        result = json.loads((workdir / point / "validation.json").read_text())
        assert result["checked"] and result["reference"] == reference
        assert result["is_reference"] == (point == reference)
        assert {(r["population"], r["statistic"]) for r in result["rows"]} == {
            (p, s) for p in pd14.POPULATIONS for s in validation.STATISTICS
        }
        stats, meta = validation.load(workdir / point / "stats.npz")
        assert meta["settings"]["neurons_per_population"] == 200 and meta["reason"] is None
        assert stats["L5I"]["rate"].size == 21  # all 21 neurons of L5I at 2 %, 200 of the others
        assert stats["L23E"]["rate"].size == 200
    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert points["validation_checked"].all() and points["validation_passed"].all(), points["validation_problems"]
    assert points.loc[0, "ks_rate_max"] == 0.0 and points.loc[1, "ks_rate_max"] > 0  # the reference vs another
    table = pd.read_csv(workdir / "results/tiny/validation.csv")
    assert len(table) == 2 * 8 * 3 and set(table["reference"]) == {reference}
    failed = json.loads((workdir / FAILED_POINT / "validation.json").read_text())
    assert not failed["checked"] and failed["reason"] == "point failed"


def test_reference_and_tolerance_changes_rerun_no_simulation(finished):
    """A far-off external reference run: validation is redone (cheap), simulations and spike
    statistics are not; then a tighter tolerance only re-judges at collect time."""
    workdir, configfile, _ = finished
    stats, meta = validation.load(workdir / OK_POINTS[0] / "stats.npz")
    for samples in stats.values():
        samples["rate"] = samples["rate"] * 5 + 20.0
        samples["cv_isi"] = samples["cv_isi"] + 1.0
        samples["correlation"] = samples["correlation"] + 0.5
    validation.save(stats, dict(meta, point="far-off"), workdir / "far.npz")
    config = yaml.safe_load((workdir / configfile).read_text())
    config["validation"] = {"references": {"tiny": "far.npz"}, "ks_margin": {"rate": 1, "cv_isi": 1, "correlation": 1}}
    simulations = mtimes(workdir, "results/**/record.json") | mtimes(workdir, "results/**/stats.npz")

    proc = snakemake(workdir, "--configfile", write_config(workdir, config, "far-loose.yaml"))
    log = proc.stdout + proc.stderr
    assert "validate_point" in log and "execute_point" not in log and "point_statistics" not in log
    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert points["valid"].all() and set(points["validation_reference_point"]) == {"far-off"}
    assert set(points["validation_reference"]) == {"nest"}  # the experiment's reference simulator
    assert (points["ks_rate_max"] > 0.9).all()
    validations = mtimes(workdir, "results/**/validation.json")

    config["validation"]["ks_margin"] = {"rate": 0.03, "cv_isi": 0.03, "correlation": 0.06}
    proc = snakemake(workdir, "--configfile", write_config(workdir, config, "far-strict.yaml"))
    assert "validate_point" not in proc.stdout + proc.stderr
    assert mtimes(workdir, "results/**/validation.json") == validations
    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert not points["valid"].any() and points["validation_problems"].str.contains("to reference >").all()

    snakemake(workdir, "--configfile", configfile)  # back to the default reference and tolerance
    assert pd.read_csv(workdir / "results/tiny/points.csv")["valid"].all()
    assert mtimes(workdir, "results/**/record.json") | mtimes(workdir, "results/**/stats.npz") == simulations


def test_second_run_recomputes_nothing(finished):
    workdir, configfile, _ = finished
    proc = snakemake(workdir, "--configfile", configfile, "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def reordered(value):
    """The same config with every mapping's keys in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(value)}
    return [reordered(item) for item in value] if isinstance(value, list) else value


def test_a_config_whose_keys_are_only_reordered_reruns_nothing(finished):
    """Snakemake compares params by their repr: configure_point's spec keeps its spec.json's key order."""
    workdir, _, _ = finished
    path = workdir / "config" / "reordered.yaml"
    path.write_text(yaml.safe_dump(reordered(CONFIG), sort_keys=False))
    proc = snakemake(workdir, "--configfile", "config/reordered.yaml", "--dry-run")
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_rerun_one_point_recomputes_only_it_and_the_tables(finished):
    workdir, configfile, _ = finished
    records = mtimes(workdir, "results/**/record.json")
    tables = mtimes(workdir, "results/tiny/points.csv")
    other_table = mtimes(workdir, "results/tiny-timeout/points.csv")
    target = f"{OK_POINTS[1]}/record.json"
    snakemake(workdir, "--configfile", configfile, "--forcerun", target)
    after = mtimes(workdir, "results/**/record.json")
    assert after[target] > records[target]
    assert {k: v for k, v in after.items() if k != target} == {k: v for k, v in records.items() if k != target}
    assert mtimes(workdir, "results/tiny/points.csv")["results/tiny/points.csv"] > tables["results/tiny/points.csv"]
    assert mtimes(workdir, "results/tiny-timeout/points.csv") == other_table


def test_rerun_failed_points(finished):
    workdir, configfile, _ = finished
    failed = [str(p.relative_to(workdir)) for p in failed_records(workdir / "results")]
    assert failed == [f"{FAILED_POINT}/record.json"]
    records = mtimes(workdir, "results/**/record.json")
    snakemake(workdir, "--configfile", configfile, "--forcerun", *failed)
    after = mtimes(workdir, "results/**/record.json")
    assert [k for k in after if after[k] != records[k]] == failed


def test_damaged_record_is_set_aside_and_its_point_rerun(finished):
    """A record cut short (full disk) is named, kept as record.json.damaged, and its point runs
    again; the other points are not touched and the tables are made."""
    workdir, configfile, _ = finished
    target = f"{OK_POINTS[0]}/record.json"
    text = (workdir / target).read_text()
    (workdir / target).write_text(text[: len(text) // 2])
    records = mtimes(workdir, "results/**/record.json")
    proc = snakemake(workdir, "--configfile", configfile)
    assert f"{target} is damaged" in proc.stdout + proc.stderr
    assert (workdir / f"{target}.damaged").read_text() == text[: len(text) // 2]
    assert json.loads((workdir / target).read_text())["status"] == "ok"
    after = mtimes(workdir, "results/**/record.json")
    assert [k for k in after if after[k] != records.get(k)] == [target]
    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert points.loc[points["path"] == OK_POINTS[0], "status"].item() == "ok"


def test_deleted_record_reruns_its_point_and_tables(finished):
    """A record deleted while its experiment's tables exist: the point runs again and the tables
    are remade (Snakemake remakes a missing intermediate file only when a job needs it)."""
    workdir, configfile, _ = finished
    target = f"{OK_POINTS[1]}/record.json"
    (workdir / target).unlink()
    tables = mtimes(workdir, "results/tiny/points.csv")
    dry = snakemake(workdir, "--configfile", configfile, "-n")
    assert "Nothing to be done" not in dry.stdout + dry.stderr
    snakemake(workdir, "--configfile", configfile)
    assert json.loads((workdir / target).read_text())["status"] == "ok"
    assert mtimes(workdir, "results/tiny/points.csv") != tables
    points = pd.read_csv(workdir / "results/tiny/points.csv")
    assert points.loc[points["path"] == OK_POINTS[1], "status"].item() == "ok"


def test_config_error_stops_before_any_job(workflow_copy):
    bad = {"experiments": [dict(CONFIG["experiments"][0], scaling="fast")]}
    proc = snakemake(workflow_copy, "--configfile", write_config(workflow_copy, bad), check=False)
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "experiments[0].scaling: 'fast' is not one of ['strong', 'weak']" in output
    assert "config/test.yaml" in output
    assert list((workflow_copy / "results").iterdir()) == []


def test_duplicate_names_stop_before_any_job(workflow_copy):
    bad = {"experiments": [CONFIG["experiments"][0], CONFIG["experiments"][0]]}
    proc = snakemake(workflow_copy, "--configfile", write_config(workflow_copy, bad), check=False)
    assert proc.returncode != 0 and "experiments[].name must be unique; repeated: tiny" in proc.stderr
    assert list((workflow_copy / "results").iterdir()) == []


def test_interrupted_workflow_resumes(workflow_copy):
    slow = dict(CONFIG["experiments"][0], name="slow", resources={"threads_per_rank": [1]})
    slow["pd14"] = dict(slow["pd14"], t_sim_ms=10_000)
    configfile = write_config(workflow_copy, {"experiments": [slow]})
    point = workflow_copy / "results/slow/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    log = workflow_copy / "logs/execute/slow/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed1.log"
    proc = subprocess.Popen(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--configfile", configfile],
        cwd=workflow_copy,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, like a shell's foreground job
    )
    deadline = time.time() + 120
    while not (log.exists() and "running:" in log.read_text()) and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # inside the simulation
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    assert proc.wait(timeout=120) != 0
    time.sleep(2.0)
    assert not (point / "record.json").exists()  # an interrupted point is not a result
    assert "status" not in log.read_text()  # and its simulation was stopped, not left running

    snakemake(workflow_copy, "--configfile", configfile)
    assert json.loads((point / "record.json").read_text())["status"] == "ok"


def test_report_holds_every_figure_and_provenance(finished):
    """The report reads the results as they are and starts no point (after a SLURM run it runs on the login
    node): make report is Snakemake's --report alone, and a point missing its record stays missing."""
    workdir, configfile, _ = finished
    made = subprocess.run(["make", "-n", "-o", ".venv/.installed", "report"], cwd=REPO, capture_output=True, text=True)
    runs = [line for line in made.stdout.splitlines() if "snakemake" in line]
    assert len(runs) == 1 and "--report" in runs[0], made.stdout
    record = workdir / OK_POINTS[1] / "record.json"
    record.rename(record.with_suffix(".aside"))
    try:
        snakemake(workdir, "--configfile", configfile, "--report", "results/report.html")
        assert not record.exists()
    finally:
        record.with_suffix(".aside").rename(record)
    html = (workdir / "results/report.html").read_text()
    for panels in DEFAULT_FIGURES.values():
        assert json.dumps(figures.caption(panels))[1:40] in html
    assert html.count("Provenance of every point of experiment") >= 2
    assert "2 points: strong scaling of PD14 at neuron scale 0.02" in html  # what was run


def test_archive_round_trips_and_is_read_beside(finished):
    """Pack `tiny`, read the archive back beside the local results (nothing reruns), and draw
    one comparison figure from both tables."""
    workdir, configfile, _ = finished
    snakemake(workdir, "archive", "--configfile", configfile)
    packed = workdir / "results/archives/tiny.tar.gz"
    assert packed.stat().st_size > 1000
    config = yaml.safe_load((workdir / configfile).read_text())
    config["archives"] = {"copy": "results/archives/tiny.tar.gz"}
    config["figures"] = {
        "comparisons": [
            {"name": "here-and-copy", "tables": ["tiny", "copy/tiny"], "panels": ["real_time_factor", "rates"]}
        ]
    }
    records = mtimes(workdir, "results/**/record.json")
    proc = snakemake(workdir, "--configfile", write_config(workdir, config, "archived.yaml"))
    assert "execute_point" not in proc.stdout + proc.stderr and "point_statistics" not in proc.stdout + proc.stderr
    assert mtimes(workdir, "results/**/record.json") == {
        **records,
        **mtimes(workdir, "results/imported/**/record.json"),
    }
    local = pd.read_csv(workdir / "results/tiny/points.csv")
    copy = pd.read_csv(workdir / "results/imported/copy/points.csv")
    pd.testing.assert_frame_equal(copy[copy["experiment"] == "tiny"].drop(columns="source"), local)
    everything = pd.read_csv(workdir / "results/points.csv")
    assert sorted(everything["source"].unique()) == ["copy", "local"]
    assert (workdir / "results/comparisons/here-and-copy.png").stat().st_size > 1000


@pytest.fixture(scope="module")
def crates(finished):
    """`snakemake crate` on the finished run: each experiment's run crate, results/crates/<experiment>."""
    workdir, configfile, _ = finished
    snakemake(workdir, "crate", "--configfile", configfile)
    return {name: workdir / "results/crates" / name for name in ("tiny", "tiny-timeout")}


def refs(value) -> list[str]:
    """The @ids a crate property refers to (one reference or a list of them)."""
    return [v["@id"] for v in (value if isinstance(value, list) else [value])]


def test_crate_describes_each_point_as_one_execution_of_the_rule_that_ran_it(finished, crates):
    workdir, configfile, first_run = finished
    for experiment, points in (("tiny", OK_POINTS), ("tiny-timeout", [FAILED_POINT])):
        metadata = json.loads((crates[experiment] / "ro-crate-metadata.json").read_text())
        graph = {entity["@id"]: entity for entity in metadata["@graph"]}
        workflow = graph[graph["./"]["mainEntity"]["@id"]]
        assert workflow["@id"] == "workflow/Snakefile" and (crates[experiment] / "workflow/rules/execute.smk").is_file()
        [tool] = [graph[i] for i in refs(workflow["hasPart"])]
        assert f"rule {tool['name']}:" in first_run.stdout + first_run.stderr
        assert configfile in refs(graph["#workflow-run"]["object"]) and (crates[experiment] / configfile).is_file()
        for point in points:
            rec = json.loads((workdir / point / "record.json").read_text())
            action = graph[f"#{tool['name']}/{point}"]
            assert refs(action["instrument"]) == [tool["@id"]] and refs(action["object"]) == [f"{point}/spec.json"]
            assert f"{point}/record.json" in refs(action["result"])
            assert action["startTime"] == rec["provenance"]["started_utc"]
            status = "Completed" if rec["status"] == "ok" else "Failed"
            assert action["actionStatus"] == f"http://schema.org/{status}ActionStatus"
        for entity in graph.values():  # each file of the run in the crate, as the run wrote it
            if entity["@type"] == "File" and entity["@id"].startswith(("results/", "benchmarks/")):
                copied, written = crates[experiment] / entity["@id"], workdir / entity["@id"]
                assert hashing.file_sha256(copied) == entity["sha256"] == hashing.file_sha256(written)
    assert "time limit" in graph[f"#{tool['name']}/{FAILED_POINT}"]["error"]


def test_crates_have_no_required_issue_for_the_provenance_run_crate_profile(crates):
    reports = check_crates(list(crates.values()))
    assert [(r["profile"], r["issues"]) for r in reports] == [("provenance-run-crate-0.5", [])] * 2
    assert all(r["passed"] for r in reports)
