"""A checkout whose path has a space: Snakemake's `script:` runs the jobs' Python by its path unquoted
(snakemake/snakemake#2645), so every job would fail with `/usr/bin/bash: line 1: /tmp/a: No such
file or directory`. make and the workflow refuse at once, naming the path and the cause."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from conftest import REPO, copy_workflow
from snnbench.planning import before_jobs


def test_the_python_of_a_path_with_a_space_is_refused():
    with pytest.raises(before_jobs.CannotRun, match=r"space in its path \(/tmp/a b/.venv/bin/python\).*#2645"):
        before_jobs.refuse_space_in_python("/tmp/a b/.venv/bin/python")
    before_jobs.refuse_space_in_python("/tmp/ab/.venv/bin/python")


def test_make_refuses_a_checkout_with_a_space_before_anything(tmp_path):
    checkout = tmp_path / "a b"
    checkout.mkdir()
    shutil.copyfile(REPO / "Makefile", checkout / "Makefile")
    done = subprocess.run(["make", "-n", "run"], cwd=checkout, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"this checkout's path has a space ({checkout})" in done.stderr and "#2645" in done.stderr
    assert not (checkout / ".venv").exists()


@pytest.mark.slow
def test_the_workflow_refuses_before_any_job_when_its_python_has_a_space(tmp_path):
    """The workflow's Python reached through a folder whose name has a space (as .venv is in a
    checkout at /tmp/a b): the run stops before any job with the message, and leaves no results."""
    workdir = copy_workflow(tmp_path)
    spaced = tmp_path / "a b"
    spaced.mkdir()
    (spaced / "venv").symlink_to(REPO / ".venv")
    python = spaced / "venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), "-m", "snakemake", "--profile", "profiles/local", "--cores", "1"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0, done.stdout[-2000:]
    assert f"The workflow's Python has a space in its path ({python})" in done.stderr
    assert "snakemake/snakemake#2645" in done.stderr and "nothing was run" in done.stderr
    assert list((workdir / "results").iterdir()) == [] and not (workdir / "logs").exists()
    assert sys.executable != str(python)
