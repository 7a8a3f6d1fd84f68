"""The workflow and the code pass Snakemake's linter, snakefmt and ruff."""

import subprocess

import pytest
from conftest import REPO, VENV_BIN


@pytest.mark.parametrize(
    "command",
    [
        ["snakemake", "--lint"],
        ["snakefmt", "--check", "."],
        ["ruff", "check", "."],
        ["ruff", "format", "--check", "."],
        # The layers, PD14 kept inside the network family, no import cycles (pyproject.toml).
        ["lint-imports", "--no-cache"],
        # The same contracts with the registries' strings counted as imports.
        ["python", "-m", "snnbench.dev.registry_imports"],
    ],
    ids=lambda c: " ".join(c),
)
def test_clean(command):
    proc = subprocess.run([str(VENV_BIN / command[0]), *command[1:]], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if command[0] == "snakemake":
        assert "Congratulations" in proc.stdout + proc.stderr


def test_default_experiment_dry_run(workflow_copy):
    """The default experiment (`make run`) plans configure, execute, collect and analyze jobs (in a
    copy without results, so that a finished `make run` in the checkout leaves nothing to plan)."""
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "--dry-run"],
        cwd=workflow_copy,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    for rule in (
        "configure_point",
        "execute_point",
        "point_statistics",
        "validate_point",
        "collect_experiment",
        "plot_figure",
        "provenance_table",
    ):
        assert rule in proc.stdout
