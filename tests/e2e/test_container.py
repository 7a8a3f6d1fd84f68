"""The image (container/Containerfile, made by container/build.sh): the whole workflow runs inside it with podman
on a user's folder mounted at /work, a tiny PD14 point on NEST, results and the run's summary in that folder (a
Brian2 cpp_standalone point inside it compiled for 430 s on 2 loaded cores: measured once, docs/container.md).
Skipped, with its reason in one line, where podman is missing, the image is not built or podman cannot start a
container here."""

from __future__ import annotations

import csv
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TINY

pytestmark = pytest.mark.slow

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
IMAGE = f"localhost/snnbench:{VERSION}"
# podman's options tried in turn: none; then runc with ulimits it may set, for a host whose crun refuses its
# cgroups ("cgroups in hybrid mode not supported") or whose limits it may not raise (setrlimit RLIMIT_NOFILE).
OPTIONS = ([], ["--runtime", "runc"])
RUN_OPTIONS = ([], ["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"])


@pytest.fixture(scope="module")
def podman() -> tuple[list[str], list[str]]:
    """podman with the options that start a container of the image here."""
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (Debian's podman; docs/container.md)")
    if subprocess.run(["podman", "image", "exists", IMAGE]).returncode != 0:
        pytest.skip(f"{IMAGE} is not built: container/build.sh (docs/container.md)")
    error = ""
    for options, run_options in zip(OPTIONS, RUN_OPTIONS, strict=True):
        proc = subprocess.run(
            ["podman", *options, "run", "--rm", *run_options, IMAGE, "true"], capture_output=True, text=True
        )
        if proc.returncode == 0:
            return ["podman", *options], run_options
        error = (proc.stderr.strip().splitlines() or ["no message"])[-1]
    pytest.skip(f"podman cannot start a container here: {error}")


def test_a_tiny_point_on_nest_runs_inside_the_image(podman, tmp_path):
    command, run_options = podman
    (tmp_path / "config").mkdir()
    shutil.copy(REPO / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    experiment = {
        "name": "inside",
        **TINY,
        "simulators": ["nest"],
        "resources": {"threads_per_rank": [1]},
    }
    (tmp_path / "config" / "mine.yaml").write_text(yaml.safe_dump({"experiments": [experiment]}))
    workflow = ["--snakefile", "/opt/snnbench/src/workflow/Snakefile", "--profile", "/opt/snnbench/src/profiles/local"]
    proc = subprocess.run(
        [*command, "run", "--rm", *run_options, "--volume", f"{tmp_path}:/work", IMAGE, "snakemake", *workflow]
        + ["--cores", "2", "--configfile", "config/mine.yaml"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    points = {row["simulator"]: row for row in csv.DictReader(Path(tmp_path, "results/inside/points.csv").open())}
    assert sorted(points) == ["nest"] and points["nest"]["status"] == "ok", points["nest"]["failure_reason"]
    assert "  inside: 1 point: 1 ok" in proc.stderr
