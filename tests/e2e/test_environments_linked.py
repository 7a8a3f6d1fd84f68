"""Named environments made once per machine and linked into each checkout: a second checkout
gets its .venv-<name> in seconds, with its own snnbench and the cached packages, and the
workflow plans the jobs that make and link the environments its points need."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
import yaml
from conftest import TINY, VENV_BIN, copy_workflow, snakemake
from snnbench import environments, paths
from snnbench.environments import maker

pytestmark = pytest.mark.slow


def cached(env: str):
    marker = environments.cache_root() / environments.key(env) / "build.json"
    if not marker.exists():
        pytest.skip(f"environment {env} is not in the cache (make env-{env}; make test makes it)")
    return marker


def test_a_second_checkout_links_the_cached_environment(tmp_path):
    made = cached("brian2")
    made_at = made.stat().st_mtime
    checkout = tmp_path / "checkout"
    shutil.copytree(paths.REPO / "scripts" / "snnbench", checkout / "scripts" / "snnbench")
    shutil.copy(paths.REPO / "pyproject.toml", checkout)
    started = time.perf_counter()
    with open(tmp_path / "link.log", "w") as log:
        marker = maker.link("brian2", log, repo=checkout)
    print(f"linked in {time.perf_counter() - started:.1f} s")  # a figure for the README, not a check
    assert marker == environments.link_marker("brian2", checkout) and marker.exists()
    assert made.stat().st_mtime == made_at  # nothing was made again
    probe = "import brian2, snnbench; print(snnbench.__file__); print(brian2.__file__)"
    python = environments.python("brian2", checkout)
    out = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=300, check=True).stdout
    package, brian2 = out.split()
    assert package.startswith(str(checkout / "scripts"))  # this checkout's code, editable
    assert brian2.startswith(str(made.parent))  # the cached environment's packages
    assert marker.read_text().strip() == environments.key("brian2")


def test_the_workflow_plans_making_and_linking_what_its_points_need(tmp_path):
    workdir = copy_workflow(tmp_path)
    config = {
        "experiments": [
            dict(TINY, name="two-envs", simulators=["nest", "brian2-cpp"], resources={"threads_per_rank": [1]}),
        ]
    }
    (workdir / "config" / "two.yaml").write_text(yaml.safe_dump(config))
    cache = tmp_path / "empty-cache"
    env = dict(os.environ, **{environments.CACHE_ENV: str(cache)})

    def plan(*args: str) -> list[str]:
        command = [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", *args, "--configfile", "config/two.yaml"]
        done = subprocess.run([*command, "-n"], cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split("\n\n")

    blocks = plan()
    brian2_point = next(block for block in blocks if "point=brian2-cpp" in block and "execute" in block)
    assert str(environments.link_marker("brian2")) in brian2_point  # the point runs in this checkout's link
    nest_point = next(block for block in blocks if "point=nest/" in block and "execute" in block)
    assert ".venv-" not in nest_point and "build.json" not in nest_point  # NEST's wheel lives in .venv
    # This checkout is linked already (make test links it): relinking it, forced, needs the cached environment.
    key = environments.key("brian2")
    blocks = plan(str(environments.link_marker("brian2")), "--forcerun", "link_environment")
    assert any(f"output: {cache}/{key}/build.json" in block for block in blocks)  # made in the cache
    link = next(block for block in blocks if "rule link_environment" in block)
    assert f"input: {cache}/{key}/build.json" in link and f"output: {environments.link_marker('brian2')}" in link
    assert not cache.exists() or not any(cache.iterdir())  # a dry run makes nothing


def _remade_link_workflow(tmp_path):
    """A workflow copy whose Snakemake metadata records this checkout's brian2 link on the machine's
    cache (a --touch run: nothing relinked), a config with a brian2 point still to run, and the
    environment of a run on an empty cache (a cache cleared, or SNNBENCH_ENV_CACHE changed): the
    link has to be made again."""
    cached("brian2")
    if not environments.is_linked("brian2"):
        pytest.skip("this checkout has no .venv-brian2 (make test links it)")
    workdir = copy_workflow(tmp_path)
    config = {
        "experiments": [dict(TINY, name="relinked", simulators=["brian2-runtime"], resources={"threads_per_rank": [1]})]
    }
    (workdir / "config" / "relinked.yaml").write_text(yaml.safe_dump(config))
    marker = str(environments.link_marker("brian2"))
    touched = snakemake(
        workdir, "--configfile", "config/relinked.yaml", "--touch", marker, "--forcerun", "link_environment"
    )
    assert "link_environment" in touched.stdout + touched.stderr
    env = dict(os.environ, **{environments.CACHE_ENV: str(tmp_path / "new-cache")})
    return workdir, env


def test_a_link_made_again_hides_no_point_still_to_run(tmp_path):
    """snakemake/snakemake#4166: a link job that must run masked the points after it, which read
    the link as `ancient`: the run made the environment and ended "100% done" without any point."""
    workdir, env = _remade_link_workflow(tmp_path)
    plan = snakemake(workdir, "--configfile", "config/relinked.yaml", "-n", env=env).stdout
    assert "rule build_environment" in plan and "rule link_environment" in plan
    assert "rule execute_point_pd14" in plan and "point=brian2-runtime/" in plan
    assert "rule all" in plan


def test_a_run_that_leaves_out_its_target_ends_non_zero_naming_it(tmp_path):
    """Aimed at one point's record, the run still meets Snakemake's mask: it must not end with rc 0."""
    workdir, env = _remade_link_workflow(tmp_path)
    point = "results/relinked/brian2-runtime/nodes1_ranks1_threads1/N0.02_K0.1/seed1"
    done = snakemake(
        workdir, "--configfile", "config/relinked.yaml", "--touch", f"{point}/record.json", env=env, check=False
    )
    said = done.stdout + done.stderr
    assert done.returncode != 0, said[-3000:]
    assert f"The run ended without making 1 of its targets ({point})" in said
    assert "Run the same command again" in said
