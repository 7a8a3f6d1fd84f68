"""Planning once: a run aimed at one point, and a job, plan only that point's seed; what must happen
before the job graph (damaged records set aside) looks only at the points the command aims at;
`rule all` takes the function that lists every point, not its value."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, experiment
from snnbench import families, planning
from snnbench.planning import before_jobs

SEEDS = list(range(1, 501))


@pytest.fixture
def many_seeds():
    """A campaign of 2 shapes x 500 seeds (1 000 points)."""
    return planning.plan({"experiments": [experiment(seeds=SEEDS)]})


def test_one_point_is_found_without_expanding_every_seed(many_seeds):
    point = "nest/nodes1_ranks1_threads2/N0.02_K0.1/seed321"
    spec = many_seeds.point("unit", point)
    assert spec["seed"] == 321 and spec["path"] == f"results/unit/{point}"
    assert many_seeds._points_of == {}  # no experiment expanded whole
    assert many_seeds.point("unit", "nest/nodes1_ranks1_threads2/N0.02_K0.1/seed999") is None
    assert many_seeds.point("unit", "nest/nodes1_ranks1_threads3/N0.02_K0.1/seed1") is None
    assert many_seeds.point("other", point) is None


def test_the_point_is_the_one_the_full_expansion_has(many_seeds):
    found = {path: many_seeds.point("unit", path.removeprefix("results/unit/")) for path in many_seeds.points}
    assert found == many_seeds.points


def test_environments_and_checks_take_one_seed(many_seeds):
    assert len(many_seeds.representatives()) == 2
    many_seeds.environments_to_make  # noqa: B018 (computed from the representatives)
    assert many_seeds._points_of == {}


def test_a_command_aimed_at_one_record_prepares_only_that_point(many_seeds):
    record = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed7/record.json"
    aimed = before_jobs.aimed_points(many_seeds, (record, f"./{record}"))
    assert list(aimed) == ["results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed7"]
    assert many_seeds._points_of == {}
    for every_point in [(), ("all",), ("results/unit/points.csv",), ("results/points.csv",), (record, "all")]:
        assert len(before_jobs.aimed_points(many_seeds, every_point)) == 2 * len(SEEDS), every_point


def test_a_damaged_record_of_the_aimed_point_is_set_aside_and_others_are_not_read(many_seeds, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    aimed = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed7"
    other = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed8"
    for point in (aimed, other):
        Path(point).mkdir(parents=True)
        Path(point, "record.json").write_text('{"cut short')
    command = before_jobs.CommandLine(targets=(f"{aimed}/record.json",))
    lines = list(before_jobs.prepare(many_seeds, dry_run=False, command=command))
    assert len(lines) == 1 and lines[0].startswith(f"{aimed}/record.json")
    assert Path(aimed, "record.json.damaged").exists() and Path(other, "record.json").exists()


def test_files_a_head_running_here_is_making_are_not_judged(many_seeds, tmp_path, monkeypatch):
    """A spikes file or record a job is writing reads as cut short: a second head in the folder (or the command
    that unlocks one killed hard) must not set it aside under the job that writes it."""
    monkeypatch.chdir(tmp_path)
    running = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed7"
    other = "results/unit/nest/nodes1_ranks1_threads1/N0.02_K0.1/seed8"
    for point in (running, other):
        Path(point).mkdir(parents=True)
        Path(point, "spikes.npz").write_bytes(b"PK\x03\x04 half written")
    Path(".snakemake/locks").mkdir(parents=True)
    Path(".snakemake/locks/0.output.lock").write_text(f"{running}/record.json\n{tmp_path}/{running}/spikes.npz\n")
    command = before_jobs.CommandLine(targets=(f"{running}/record.json", f"{other}/record.json"))
    lines = list(before_jobs.prepare(many_seeds, dry_run=False, command=command))
    assert len(lines) == 1 and lines[0].startswith(f"{other}/spikes.npz"), lines
    assert Path(running, "spikes.npz").exists() and not Path(other, "spikes.npz").exists()


def test_the_command_line_is_read_for_executor_and_targets(monkeypatch):
    monkeypatch.setattr("sys.argv", ["/x/bin/snakemake", "--executor", "slurm", "-n", "results/a/b/record.json"])
    assert before_jobs.CommandLine.of_this_process() == before_jobs.CommandLine("slurm", ("results/a/b/record.json",))
    monkeypatch.setattr("sys.argv", ["python", "-c", ""])
    assert before_jobs.CommandLine.of_this_process() == before_jobs.CommandLine()


def test_a_snakemake_command_line_that_cannot_be_read_stops_the_run(monkeypatch):
    """Never taken as a local run: a cluster run would skip the node-local checks."""
    monkeypatch.setattr("sys.argv", ["/x/bin/snakemake", "--executor", "slurm", "--no-such-option"])
    with pytest.raises(before_jobs.CannotRun, match=r"Cannot read this snakemake command line \(--executor slurm"):
        before_jobs.CommandLine.of_this_process()


def test_rule_all_takes_the_function_and_no_environment_is_set_while_the_snakefile_is_read():
    snakefile = (REPO / "workflow" / "Snakefile").read_text()
    assert re.search(r"rule all:\n    input:\n(?:        #.*\n)*        get_final_output,\n", snakefile)
    read_while_parsing = snakefile + (REPO / "workflow" / "rules" / "common.smk").read_text()
    assert "os.environ[" not in read_while_parsing and "putenv" not in read_while_parsing


def test_every_family_point_ends_in_its_seed():
    for name in families.names():
        assert families.get(name).point_pattern.endswith("/seed{seed}"), name
