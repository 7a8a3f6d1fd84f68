"""PyNN on NEST (simulator `pynn-nest`): a quiet import, the same network as PyNEST, and the real
workflow on a mixed experiment (nest and pynn-nest, 1 and 2 threads), plus 2 MPI ranks where an
MPI-capable NEST (`.venv-nest-mpi`) is installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import matplotlib.pyplot as plt
import numpy as np
import pytest
import yaml
from conftest import (
    DEFAULT_FIGURES,
    REPO,
    VENV_BIN,
    assert_plausible,
    copy_workflow,
    experiment,
    run_first_point,
    snakemake,
    validated,
)
from snnbench import environments, figures, planning
from snnbench.network import simulators
from snnbench.network.models import pd14
from snnbench.tables.frames import read_points

ENV = {"OMP_NUM_THREADS": "1"}


def test_pynn_points_run_in_the_main_environment_or_nest_mpi(tmp_path):
    cfg = validated(experiment(simulators=["pynn-nest"], resources={"ranks_per_node": [1, 2], "threads_per_rank": [1]}))
    one_rank, two_ranks = planning.expand_points(cfg["experiments"][0])
    assert simulators.environment_for(one_rank) == "pynn-nest" and "pynn-nest" in environments.MAIN
    assert simulators.python_for(one_rank, repo=tmp_path) == sys.executable
    assert simulators.environment_for(two_ranks) == "nest-mpi"  # the lead's MPI build, with PyNN's pins
    assert (REPO / "envs" / "pynn-nest.yaml").exists()


# In a child process: import pyNN.nest the way the backend does, with nest-config on PATH (the
# wheel puts it beside the interpreter) and every warning an error.
IMPORT = """
import os, sys, warnings
warnings.simplefilter("error")
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
path = os.environ["PATH"]
from snnbench.network.simulators.pynn_nest import import_pynn_nest
sim, loaded = import_pynn_nest()
assert os.environ["PATH"] == path, "PATH not restored"
print("extensions_loaded", loaded)
"""


def test_import_does_not_try_to_build_the_extension(tmp_path):
    assert (VENV_BIN / "nest-config").exists()  # what PyNN would find and run cmake with
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT],
        cwd=tmp_path,  # PyNN falls back to building in ./_build when its own folder is read-only
        capture_output=True,
        text=True,
        env={**ENV, "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "extensions_loaded False" in proc.stdout  # the PyPI wheel has no pynn_extensions
    for trace in ("cmake", "nest-config", "Unable to", "Warning"):
        assert trace not in proc.stdout + proc.stderr, trace
    assert not (tmp_path / "_build").exists()


# In a child process: build a point's network (setup, create, connect) and count the synapses of
# every projection in NEST's kernel, whichever front end built it.
COUNT = """
import json, sys
import nest
from snnbench.network.simulators import get_builder
spec = json.loads(sys.argv[1])
backend = get_builder(spec["simulator"], spec["model_name"])(spec)
for phase in ("setup", "create", "connect"):
    getattr(backend, phase)()
nodes = [p.node_collection if spec["simulator"] == "pynn-nest" else p for p in backend.populations]
kernel = [[len(nest.GetConnections(source=s, target=t)) for s in nodes] for t in nodes]
own = backend.synapses_per_projection().tolist() if hasattr(backend, "synapses_per_projection") else None
print(json.dumps({"kernel": kernel, "own": own}))
"""


def count_synapses(spec: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", COUNT, json.dumps(spec)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**ENV, "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": str(spec["resources"]["threads_per_rank"])},
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {k: np.array(v) if v is not None else None for k, v in json.loads(proc.stdout.splitlines()[-1]).items()}


@pytest.mark.slow
def test_same_synapses_per_projection_as_pynest():
    cfg = validated(
        experiment(
            simulators=["nest", "pynn-nest"],
            resources={"threads_per_rank": [1]},
            # DC drive here (the workflow test below has Poisson drive): the recurrent network is the same.
            pd14={"neuron_scale": 0.01, "indegree_scale": 0.1, "t_presim_ms": 0, "t_sim_ms": 10, "input": "dc"},
            seeds=[3],
        )
    )
    nest_spec, pynn_spec = planning.expand_points(cfg["experiments"][0])
    native, pynn = count_synapses(nest_spec), count_synapses(pynn_spec)
    configured = pd14.derive(0.01, 0.1).num_synapses  # [target, source]
    assert np.array_equal(native["kernel"], configured)
    assert np.array_equal(pynn["kernel"], native["kernel"]), pynn["kernel"] - native["kernel"]
    assert np.array_equal(pynn["own"], pynn["kernel"])  # PyNN's count agrees with NEST's


# 1 % of the neurons: PyNN connects target by target, and each of those NEST calls opens an OpenMP
# parallel region, which on 2 threads of a busy machine waits for both threads to be scheduled.
TINY = {
    "scaling": "strong",
    "pd14": {"neuron_scale": 0.01, "indegree_scale": 0.1, "t_presim_ms": 50, "t_sim_ms": 200},
    "seeds": [1],
    "time_limit_min": 20,
}
MIXED = dict(TINY, name="mixed", simulators=["nest", "pynn-nest"], resources={"threads_per_rank": [1, 2]})
PYNN_POINTS = [f"results/mixed/pynn-nest/nodes1_ranks1_threads{t}/N0.01_K0.1/seed1" for t in (1, 2)]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("pynn"))
    (workdir / "config" / "mixed.yaml").write_text(yaml.safe_dump({"experiments": [MIXED]}))
    # conftest's snakemake() allows 15 min; two PyNN points on a shared machine may need more.
    snakemake(workdir, "--configfile", "config/mixed.yaml", timeout_s=2700)
    return workdir


@pytest.mark.slow
def test_pynn_points_on_one_and_two_threads(mixed):
    threads = []
    for point in PYNN_POINTS:
        rec = json.loads((mixed / point / "record.json").read_text())
        assert rec["status"] == "ok", rec["failure"]
        assert rec["simulator"]["name"] == "pynn-nest"
        assert rec["simulator"]["version"].startswith("PyNN 0.13")
        assert rec["simulator"]["pynn_nest_extensions"].startswith("not built: PD14 uses no stochastic synapses")
        assert rec["simulator"]["spike_precision"] == "on_grid"  # iaf_psc_exp, as in NEST's backend
        assert rec["provenance"]["packages"]["pynn"] == "0.13.0"
        assert rec["network"]["num_synapses"] == rec["network"]["expected_synapses"] > 0
        assert_plausible(rec)
        threads.append(rec["ranks"][0]["threads"])
        log = (mixed / point.replace("results/", "logs/execute/", 1)).with_suffix(".log").read_text()
        assert "cmake" not in log and "nest-config" not in log and "Traceback" not in log
    assert threads == [1, 2]


@pytest.mark.slow
def test_mixed_experiment_tables_and_figures_show_both_simulators(mixed):
    points = read_points(mixed / "results/mixed/points.csv")
    assert sorted(points["simulator"]) == ["nest", "nest", "pynn-nest", "pynn-nest"]
    assert points["valid"].all()
    # Same model size on both front ends: the same synapse count in every point.
    assert points["num_synapses"].nunique() == 1
    for name in DEFAULT_FIGURES:
        for ext in ("png", "pdf"):
            assert (mixed / f"results/mixed/figures/{name}.{ext}").stat().st_size > 1000
    # Each panel drawn from the table tells the simulators apart (legend entries or tick labels name
    # both); the distribution panels read spike statistics, validation_distances has no series.
    panels = {p for ps in DEFAULT_FIGURES.values() for p in ps if not figures.PANELS[p].needs_distributions}
    for name in sorted(panels - {"validation_distances"}):
        fig, ax = plt.subplots()
        figures.PANELS[name].draw(ax, figures.PanelData(points))
        legend = ax.get_legend()
        texts = [t.get_text() for t in legend.get_texts()] if legend else []
        texts += [t.get_text() for t in ax.get_xticklabels()]
        plt.close(fig)
        for simulator in ("nest", "pynn-nest"):
            assert any(simulator in t.split() for t in texts), (name, texts)


@pytest.mark.slow
@pytest.mark.skipif(
    not (REPO / ".venv-nest-mpi" / "bin" / "python").exists() or shutil.which("mpirun") is None,
    reason="needs an MPI-capable NEST with PyNN (`make env-nest-mpi`, envs/nest-mpi.yaml) and mpirun",
)
def test_two_mpi_ranks(tmp_path):
    resources = {"ranks_per_node": [2], "threads_per_rank": [1]}
    cfg = validated(dict(MIXED, name="mpi", simulators=["pynn-nest"], resources=resources))
    rec = run_first_point(tmp_path, cfg, 1200)
    assert rec["status"] == "ok", rec["failure"]
    assert [r["rank"] for r in rec["ranks"]] == [0, 1]
    assert_plausible(rec)
    # PyNN 0.13's FixedTotalNumberConnector splits each projection's N over the ranks assuming
    # equal numbers of targets per rank: measured here, 2 ranks created 296 711 of 298 883
    # synapses (N = 0.02, K = 0.1). The record shows both numbers; this marks the known loss.
    created, expected = rec["network"]["num_synapses"], rec["network"]["expected_synapses"]
    # It loses about 1/size of a projection where a population size is odd (0.7 % here), and
    # never creates more than asked.
    assert 0.98 * expected <= created <= expected, (created, expected)
    if created != expected:
        pytest.xfail(f"PyNN 0.13 FixedTotalNumberConnector over 2 MPI ranks: {created} of {expected} synapses")
