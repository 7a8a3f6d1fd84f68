"""Shared fixtures: a valid experiment config and a copy of the workflow to run in isolation."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from snnbench import paths, planning
from snnbench.schemas import schema_default

REPO = Path(__file__).resolve().parents[1]
SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
VENV_BIN = Path(sys.executable).parent
# Activity bounds of the tests (config/config.yaml's activity_check, written out so that a change
# of the defaults does not silently change what the tests expect).
BOUNDS = {
    "min_rate_hz": 0.05,
    "max_rate_hz": 50.0,
    "min_cv_isi": 0.2,
    "max_cv_isi": 2.0,
    "min_neurons_for_cv": 10,
    "reference_max_rel_deviation": 0.3,
}
# The figures every PD14 experiment gets by default: figure name -> panels (the schema's default).
DEFAULT_FIGURES = schema_default("figures", "experiment")

# The test files that take longest, longest first (fresh-clone make test, 2026-11-25: Brian2GeNN's run
# ~700 s, the SLURM campaigns ~500 s, ...). make test hands files to its pytest-xdist workers in
# collection order (--dist loadfile --no-loadscope-reorder), so these start first and no long run
# starts last with the other worker idle. The rest keep pytest's order.
LONGEST_FIRST = (
    "e2e/test_brian2genn.py",
    "e2e/test_slurm.py",
    "e2e/test_workflow.py",
    "e2e/test_brian2.py",
    "e2e/test_config_messages.py",
    "e2e/test_slurm_head_killed.py",
    "e2e/test_group_verdict_run.py",
    "e2e/test_slurm_module_trees.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    tests = Path(__file__).parent
    items.sort(key=lambda item: rank.get(item.path.relative_to(tests).as_posix(), len(rank)))  # stable sort


# A tiny PD14 experiment for end-to-end runs of the workflow (seconds per point on 2 cores).
TINY = yaml.safe_load((Path(__file__).parent / "configs" / "tiny.yaml").read_text())


def experiment(**overrides) -> dict:
    exp = {
        "name": "unit",
        "simulators": ["nest"],
        "scaling": "strong",
        "resources": {"threads_per_rank": [1, 2]},
        "pd14": dict(TINY["pd14"]),
        "seeds": [1],
    }
    exp.update(overrides)
    return exp


def finished_points(seeds=(1, 2)):
    """A planned campaign of tiny points, finished in the working directory: each point's spec, record and spikes
    as the workflow writes them (the spikes differ by seed)."""
    import numpy as np
    from snnbench.dev.synthetic import make_record
    from snnbench.jsonfile import write_json

    campaign = planning.plan({"experiments": [experiment(resources={"threads_per_rank": [1]}, seeds=list(seeds))]})
    for path, spec in campaign.points.items():
        Path(path).mkdir(parents=True)
        write_json(spec, f"{path}/spec.json")
        write_json(make_record(spec, np.random.default_rng(spec["seed"])), f"{path}/record.json")
        np.savez_compressed(f"{path}/spikes.npz", senders=np.array([1, spec["seed"]]), times_ms=np.array([0.1, 0.2]))
    return campaign


def validated(*experiments) -> dict:
    """A config of these experiments as the workflow plans it: checked, defaults filled in
    (planning.ConfigRefused if it is refused)."""
    config = {"experiments": copy.deepcopy(list(experiments))}
    planning.plan(config)
    return config


def config_problems(exp: dict, **top) -> list[str]:
    """The lines the workflow refuses a config with one experiment by (the schema, then the checks
    the schema cannot make); [] if it plans."""
    try:
        planning.plan({"experiments": [copy.deepcopy(exp)], **copy.deepcopy(top)})
    except planning.ConfigRefused as error:
        return error.problems
    return []


def run_first_point(tmp_path: Path, cfg: dict, limit_s: float) -> dict:
    """The first point of a validated config, run in `tmp_path` as the execute rule runs it
    (child process, failures recorded); returns its record."""
    from snnbench import planning
    from snnbench.network import execute

    spec = planning.expand_points(cfg["experiments"][0])[0]
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return execute.run_point(
        tmp_path / "spec.json",
        tmp_path / "record.json",
        tmp_path / "spikes.npz",
        tmp_path / "log",
        limit_s,
    )


def per_population(rec: dict, key: str) -> dict:
    """One statistic of a record's populations (snnbench.network.activity: rate_hz, spikes, cv_isi, correlation)."""
    return {row["population"]: row[key] for row in rec["populations"]}


def assert_plausible(rec: dict, bounds: dict | None = None) -> None:
    """The activity verdict collect gives a finished record with no reference ensemble beside it (the one rule,
    snnbench.network.judging.plausibility), asserted plausible."""
    import pandas as pd
    from snnbench.network import rows
    from snnbench.network.judging import plausibility

    judged = plausibility.judge(pd.DataFrame([rows.point_row(rec, bounds or BOUNDS)]), []).iloc[0]
    assert judged["activity_checked"] and judged["activity_plausible"], judged["activity_problems"]


def copy_workflow(parent: Path) -> Path:
    """The workflow's files (no results, environments or Snakemake state) in a fresh folder. Its
    points run in the environments of the checkout whose snnbench package runs the workflow."""
    dest = parent / "snnbench"
    shutil.copytree(REPO, dest, ignore=paths.copy_ignore(REPO))
    (dest / "results").mkdir()
    return dest


def plugin_environment(workdir: Path, plugins: str, **variables: str) -> dict:
    """Our environment with the workflow copy's tests/<plugins> folder on PYTHONPATH (where the test's plugin
    modules are) and the variables that register them (SNNBENCH_NETWORK_SIMULATORS=..., say)."""
    path = os.pathsep.join(filter(None, [str(workdir / "tests" / plugins), os.environ.get("PYTHONPATH")]))
    return dict(os.environ, **variables, PYTHONPATH=path)


@pytest.fixture
def workflow_copy(tmp_path) -> Path:
    return copy_workflow(tmp_path)


def snakemake(
    workdir: Path, *args: str, check: bool = True, timeout_s: float = 900, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the real Snakemake with the local profile in `workdir` (env: its environment, default ours)."""
    proc = subprocess.run(
        [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", *args],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


# A site's module tree as the module-build tests make it: NEST (the cached MPI build of
# envs/nest-mpi.yaml) as module nest/3.10.0, which loads its MPI module as a site's NEST would.
NEST_MODULE = "nest/3.10.0"
MPI_MODULE = "openmpi/4.1"


def module_tree(folder: Path) -> Path:
    """Lua modulefiles in `folder` (on storage the SLURM test cluster's nodes see, not /tmp):
    NEST_MODULE puts the nest-mpi environment's Python first on PATH and depends on MPI_MODULE."""
    from snnbench import environments
    from snnbench.machine import lmod

    if lmod.LMOD.command() is None:
        pytest.skip("Lmod is not installed: make test installs Debian's lmod (as root)")
    if not environments.is_linked("nest-mpi"):
        pytest.skip("MPI-capable NEST missing: run `make env-nest-mpi` (make test does)")
    nest_bin = environments.cached(environments.key("nest-mpi")) / "bin"
    for name, text in {
        NEST_MODULE: f'depends_on("{MPI_MODULE}")\nprepend_path("PATH", "{nest_bin}")\nsetenv("NEST_MODULE", "1")\n',
        MPI_MODULE: 'whatis("the MPI NEST was built with (Debian\'s Open MPI)")\n',
    }.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.lua").write_text(text)
    return folder


HIERARCHY = ["GCC/13", "OpenMPI/4", "NEST/3.9"]  # what a site's user loads, in order
WITHDRAWN = "withdrawn: use OpenMPI/4"


def module_hierarchy(root: Path, syntax: str, nest_bin: Path) -> dict:
    """A module hierarchy as EasyBuild lays it out: Core/GCC/13 -> Compiler/GCC/13/{OpenMPI/4, ParaStationMPI/5,
    BrokenMPI/1} -> MPI/GCC/13/OpenMPI/4/NEST/3.9, whose NEST is the Python in `nest_bin`; Lua modulefiles (Lmod)
    or Tcl ones (Environment Modules). The folders by name."""
    found = {
        "core": root / "Core",
        "compiler": root / "Compiler/GCC/13",
        "openmpi": root / "MPI/GCC/13/OpenMPI/4",
        "psmpi": root / "MPI/GCC/13/ParaStationMPI/5",
    }
    lua = syntax == "lua"
    adds = 'prepend_path("MODULEPATH", "{}")\n' if lua else "#%Module\nprepend-path MODULEPATH {}\n"
    files = {
        found["core"] / "GCC/13": adds.format(found["compiler"]),
        found["compiler"] / "OpenMPI/4": adds.format(found["openmpi"]),
        found["compiler"] / "ParaStationMPI/5": adds.format(found["psmpi"]),
        found["compiler"] / "BrokenMPI/1": f'LmodError("{WITHDRAWN}")\n' if lua else f'#%Module\nerror "{WITHDRAWN}"\n',
        found["openmpi"] / "NEST/3.9": f'prepend_path("PATH", "{nest_bin}")\nsetenv("NEST_MODULE", "1")\n'
        if lua
        else f"#%Module\nprepend-path PATH {nest_bin}\nsetenv NEST_MODULE 1\n",
    }
    found["psmpi"].mkdir(parents=True)
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_name(path.name + (".lua" if lua else "")).write_text(text)
    return found


# Environment Modules (the Tcl tool) beside Debian's Lmod, whose package conflicts with it: Debian's
# package unpacked here, not installed (its modulecmd.tcl runs with Debian's tclsh8.6, package tcl).
TOOLS_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "tools"


def environment_modules() -> str:
    """modulecmd.tcl: the one set up or installed here, else Debian's package unpacked into TOOLS_CACHE
    (apt-get download, dpkg-deb -x; once per machine). Skips where none can be had."""
    from snnbench.machine.tcl_modules import ENVIRONMENT_MODULES

    unpacked = TOOLS_CACHE / "environment-modules"
    command = unpacked / "usr" / "lib" / "modulecmd.tcl"
    found = ENVIRONMENT_MODULES.command() or (str(command) if command.exists() else None)
    if found:
        return found
    if not Path("/usr/bin/tclsh8.6").exists():
        pytest.skip("Environment Modules needs Tcl 8.6: apt-get install tcl")
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        pytest.skip("Environment Modules is not installed and apt-get cannot fetch it here")
    TOOLS_CACHE.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=TOOLS_CACHE))
    fetched = subprocess.run(["apt-get", "download", "environment-modules"], cwd=folder, capture_output=True, text=True)
    debs = list(folder.glob("environment-modules_*.deb"))
    if fetched.returncode != 0 or not debs:
        shutil.rmtree(folder)
        pytest.skip(f"apt-get download environment-modules failed: {fetched.stderr.strip()[-200:]}")
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(folder / "tree")], check=True)
    try:
        (folder / "tree").rename(unpacked)  # atomic: another test worker may unpack it at the same time
    except OSError:
        pass
    shutil.rmtree(folder, ignore_errors=True)
    return str(command)


def run_in_torch(probe: str) -> dict:
    """The JSON a probe prints last, run in the torch environment on one thread (skipped where it is not linked)."""
    python = REPO / ".venv-torch" / "bin" / "python"
    if not python.exists():
        pytest.skip("environment torch not installed (make env-torch)")
    env = {"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO / "scripts")}
    proc = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_crates(crates: list[Path]) -> list[dict]:
    """roc-validator's reports on run crates (snnbench.results.crate_check, in the checker's environment), with
    every request for the network sent to a closed port: the check must need none. Skips where the checker's
    environment is not made (make env-rocrate-validator; make test makes it)."""
    from snnbench import environments

    if not environments.is_linked("rocrate-validator"):
        pytest.skip("the crate checker's environment is missing: run `make env-rocrate-validator` (make test does)")
    nowhere = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    python = environments.linked("rocrate-validator") / "bin" / "python"
    proc = subprocess.run(
        [str(python), "-m", "snnbench.results.crate_check", "--json", *map(str, crates)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **nowhere},
        timeout=600,
    )
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return json.loads(proc.stdout)
