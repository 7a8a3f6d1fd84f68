"""What a new SLURM head does before planning about a head killed hard (snnbench.planning.earlier_head): the
lock named with the command that clears it, the earlier head's jobs in this folder waited for. squeue faked."""

from __future__ import annotations

import subprocess

from snnbench.planning import earlier_head

COMMENT = "rule_execute_point_pd14_wildcards_halfway_nest_nodes1_ranks1_threads1_N0.02_K0.1_seed2"


def squeue_saying(*outputs: str):
    """A fake subprocess.run answering squeue with each output in turn (the last one after)."""
    said = list(outputs)

    def run(command, **kwargs):
        assert command[0] == "squeue" and "--me" in command
        return subprocess.CompletedProcess(command, 0, said.pop(0) if len(said) > 1 else said[0], "")

    return run


def test_only_the_plugins_jobs_of_this_folder_are_the_earlier_heads(tmp_path):
    here, other = tmp_path / "here", tmp_path / "other"
    here.mkdir(), other.mkdir()
    out = f"7|{here}|{COMMENT}\n8|{other}|{COMMENT}\n9|{here}|(null)\n10|{here}/|rule_all\n"
    assert earlier_head.unfinished_jobs(here, squeue_saying(out)) == {"7": COMMENT, "10": "rule_all"}


def test_no_squeue_means_no_jobs(tmp_path):
    def missing(command, **kwargs):
        raise FileNotFoundError(command[0])

    assert earlier_head.unfinished_jobs(tmp_path, missing) == {}
    failed = lambda command, **kwargs: subprocess.CompletedProcess(command, 1, "", "error")  # noqa: E731
    assert earlier_head.unfinished_jobs(tmp_path, failed) == {}


def test_a_new_head_waits_for_the_earlier_heads_jobs(tmp_path, monkeypatch):
    fake = squeue_saying(f"7|{tmp_path}|{COMMENT}\n", f"7|{tmp_path}|{COMMENT}\n", "")
    monkeypatch.setattr(earlier_head.subprocess, "run", fake)
    lines = list(earlier_head.settle(tmp_path, False, ["snakemake"], wait_s=0))
    assert len(lines) == 2 and "7 (execute_point_pd14_wildcards_halfway_" in lines[0], lines
    assert "Waiting for them to end, so that no point runs twice (squeue -j 7" in lines[0]
    assert lines[1].startswith("The earlier head's jobs ended after")
    # A dry run names them and waits for nothing; --unlock neither looks nor waits.
    monkeypatch.setattr(earlier_head.subprocess, "run", squeue_saying(f"7|{tmp_path}|{COMMENT}\n"))
    (line,) = earlier_head.settle(tmp_path, True, ["snakemake", "-n"])
    assert line.endswith("; a run waits for them")
    assert list(earlier_head.settle(tmp_path, False, ["snakemake", "--unlock"])) == []


def test_a_lock_is_named_with_the_command_that_clears_it(tmp_path, monkeypatch):
    (tmp_path / ".snakemake" / "locks").mkdir(parents=True)
    (tmp_path / ".snakemake" / "locks" / "0.output.lock").write_text("")
    monkeypatch.setattr(earlier_head.subprocess, "run", squeue_saying(f"7|{tmp_path}|{COMMENT}\n"))
    argv = ["/x/.venv/bin/snakemake", "--profile", "profiles/slurm", "--configfile", "config/my site.yaml"]
    (line,) = earlier_head.settle(tmp_path, False, argv)  # Snakemake refuses next: nothing waits
    assert line.endswith(
        "clear it with: /x/.venv/bin/snakemake --profile profiles/slurm --configfile 'config/my site.yaml' --unlock"
    )
