"""The workflow deployed the Snakemake way (docs/deploy.md): snakedeploy writes a Snakefile that uses a copy of
this repository as a module, in a folder of the user's own with a config of their own, and Snakemake runs it
there with a Python that has Snakemake and NEST but no snnbench: the workflow and its jobs find the copy's
package, results and logs land in the user's folder, and the run ends with its summary."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TINY, VENV_BIN

pytestmark = pytest.mark.slow

# What docs/deploy.md tells a user to append to the Snakefile snakedeploy wrote: Snakemake calls only the main
# Snakefile's onsuccess and onerror.
HANDLERS = """

from snnbench.planning.after_run import ended


onsuccess:
    ended(succeeded=True)


onerror:
    ended(succeeded=False)
"""


def git(folder: Path, *args: str) -> str:
    author = ["-c", "user.name=snnbench tests", "-c", "user.email=tests@example.invalid"]
    return subprocess.run(["git", *author, *args], cwd=folder, check=True, capture_output=True, text=True).stdout


def repository_copy(dest: Path) -> Path:
    """This checkout's files (tracked, and new ones git does not ignore) as a git repository of one commit."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # (a tracked file deleted in the working tree is left out)
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    git(dest, "init", "--quiet", "--initial-branch=main")
    git(dest, "add", "--all")
    git(dest, "commit", "--quiet", "--message", "snnbench as deployed")
    return dest


def deploy(source: Path, dest: Path) -> None:
    """snakedeploy's local mode, then the two steps docs/deploy.md adds: the module's Snakefile by its full path
    (snakedeploy 0.17.1 writes it relative to the source, which Snakemake reads from dest/workflow/) and the
    handlers of a run's end."""
    subprocess.run(
        [str(VENV_BIN / "snakedeploy"), "deploy-workflow", str(source), str(dest), "--branch", "main"],
        check=True,
        capture_output=True,
    )
    snakefile = dest / "workflow" / "Snakefile"
    text = snakefile.read_text().replace('"workflow/Snakefile"', f'"{source}/workflow/Snakefile"')
    snakefile.write_text(text + HANDLERS)


def python_without_snnbench(folder: Path) -> tuple[Path, dict]:
    """An interpreter that sees this checkout's installed packages (Snakemake, NEST) on PYTHONPATH but not its
    editable snnbench (a .pth file, read only in site-packages themselves), as a user's would."""
    subprocess.run([str(VENV_BIN / "python"), "-m", "venv", "--without-pip", str(folder)], check=True)
    environ = dict(os.environ, PYTHONPATH=sysconfig.get_paths()["purelib"])
    environ.pop("SNNBENCH_ENVIRONMENTS", None)
    return folder / "bin" / "python", environ


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    if not (VENV_BIN / "snakedeploy").exists():
        pytest.skip("snakedeploy is not installed: make env installs envs/dev.yaml's pins")
    root = tmp_path_factory.mktemp("deployed")
    source = repository_copy(root / "snnbench")
    user = root / "user"
    deploy(source, user)
    experiment = {"name": "deployed", **TINY, "resources": {"threads_per_rank": [1]}}
    (user / "config" / "mine.yaml").write_text(yaml.safe_dump({"experiments": [experiment]}))
    python, environ = python_without_snnbench(root / "python")
    return source, user, python, environ


def snakemake(deployed, *args: str) -> subprocess.CompletedProcess:
    _, user, python, environ = deployed
    command = [str(python), "-m", "snakemake", "--profile", "profiles/local", "--cores", "2"]
    proc = subprocess.run(
        [*command, "--configfile", "config/mine.yaml", *args],
        cwd=user,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    return proc


def test_the_users_python_has_no_snnbench_of_its_own(deployed):
    _, user, python, environ = deployed
    proc = subprocess.run([str(python), "-c", "import snnbench"], cwd=user, env=environ, capture_output=True)
    assert proc.returncode != 0


def test_a_deployed_workflow_runs_its_point_in_the_users_folder(deployed):
    source, user, _, _ = deployed
    dry = snakemake(deployed, "--dry-run")
    assert "execute_point_pd14" in dry.stdout + dry.stderr and "snnbench: the experiments" not in dry.stderr

    proc = snakemake(deployed)
    [point] = list(csv.DictReader((user / "results/deployed/points.csv").open()))
    assert point["status"] == "ok", point["failure_reason"]
    # The point's processes imported the deployed copy's package: its record names the copy's commit.
    assert point["git_commit"] == git(source, "rev-parse", "HEAD").strip()
    assert (user / "logs/execute/deployed").is_dir() and (user / "results/deployed/figures").is_dir()
    assert not (source / "results/deployed").exists() and not (source / "logs").exists()
    assert "  deployed: 1 point: 1 ok (0 invalid), 0 failed" in proc.stderr
