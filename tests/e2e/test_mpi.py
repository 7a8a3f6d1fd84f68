"""Real MPI ranks on this machine (mpirun): 2 ranks x 1 thread against 1 rank x 2 threads.

Both have two virtual processes, and NEST's random streams belong to virtual processes, not to
ranks or threads: the network and its activity must come out the same. The same two points check
the memory estimate sent to SLURM against the peak they measured.
"""

import json

import pytest
import yaml
from conftest import copy_workflow, per_population, snakemake
from snnbench import environments
from snnbench.network.models.pd14 import estimate_mem_mb
from snnbench.records import columns

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not environments.is_linked("nest-mpi"),
        reason="MPI-capable NEST missing: run `make env-nest-mpi` (make test does)",
    ),
]

EXPERIMENT = {
    "name": "mpi",
    "simulators": ["nest"],
    "scaling": "strong",
    "resources": {"ranks_per_node": [1, 2], "threads_per_rank": [1, 2]},
    "pd14": {"neuron_scale": 0.05, "indegree_scale": 0.1, "t_presim_ms": 100, "t_sim_ms": 500},
    "seeds": [3],
}


RECORD = "results/mpi/nest/nodes1_ranks{}_threads{}/N0.05_K0.1/seed3/record.json"


@pytest.fixture(scope="module")
def ranks_and_threads(tmp_path_factory) -> tuple[dict, dict]:
    """The records of 2 ranks x 1 thread and 1 rank x 2 threads, run through the workflow."""
    workdir = copy_workflow(tmp_path_factory.mktemp("mpi"))
    (workdir / "config" / "mpi.yaml").write_text(yaml.safe_dump({"experiments": [EXPERIMENT]}))
    snakemake(workdir, RECORD.format(2, 1), RECORD.format(1, 2), "--configfile", "config/mpi.yaml")
    records = []
    for shape in ((2, 1), (1, 2)):
        rec = json.loads((workdir / RECORD.format(*shape)).read_text())
        # Snakemake's measurement of the whole job (ranks, the wrapper, mpirun) beside the record.
        benchmark = workdir / RECORD.format(*shape).replace("results/", "benchmarks/execute/", 1)
        rec["job_benchmark"] = columns.read_benchmark_row(benchmark.parent.with_suffix(".tsv"))
        records.append(rec)
    return tuple(records)


def test_two_ranks_match_two_threads(ranks_and_threads):
    ranks, threads = ranks_and_threads
    assert ranks["status"] == threads["status"] == "ok", (ranks["failure"], threads["failure"])

    assert len(ranks["ranks"]) == 2 and ranks["simulator"]["have_mpi"]
    # Each rank holds part of the network; together they hold all of it.
    assert 0 < ranks["ranks"][0]["local_synapses"] < ranks["network"]["num_synapses"]
    assert (
        ranks["network"]["num_synapses"] == threads["network"]["num_synapses"] == ranks["network"]["expected_synapses"]
    )
    assert per_population(ranks, "spikes") == per_population(threads, "spikes")
    assert per_population(ranks, "rate_hz") == pytest.approx(per_population(threads, "rate_hz"))
    # Detailed timers come with the MPI build (the PyPI wheel has none).
    assert "time_update" in ranks["simulator_timers_s"]["simulate"]


def test_memory_estimate_covers_the_peak(ranks_and_threads):
    # Goal: what a point asks SLURM for (per node, times the nodes) is never below the peak memory
    # of its job and at most 25 % above it. A cgroup limit counts the job's pages once: Snakemake's
    # max_pss of the job (ranks, the wrapper, mpirun; shared pages split among them), not the sum of
    # VmHWM, which counts shared libraries in every process. NEST's memory is deterministic for a
    # given build and shape.
    for rec in ranks_and_threads:
        estimate = estimate_mem_mb(rec["point"]) * rec["point"]["resources"]["nodes"]
        peak = float(rec["job_benchmark"]["max_pss"])
        assert peak <= estimate <= 1.25 * peak, (rec["point"]["path"], estimate, peak)
        assert rec["memory"]["peak_rss_mb_sum"] <= estimate  # never below the ranks' own peaks either


def test_local_ranks_are_bound_to_cores_of_their_own(ranks_and_threads):
    # The site default (cores): mpirun binds each rank to a core of its own (--map-by slot:PE=1
    # --bind-to core), as the kernel said of each rank's main thread during simulate.
    ranks, _ = ranks_and_threads
    binding = ranks["binding"]
    assert binding["asked"] == "cores" and "--map-by slot:PE=1 --bind-to core" in binding["launch"]
    assert [t["rank"] for t in binding["threads"]] == [0, 1] and binding["obtained"] == "pinned"
    assert len({t["cores"][0] for t in binding["threads"]}) == 2, binding["threads"]
    assert sorted(len(r["binding"]["cpus"]) for r in ranks["ranks"]) == [1, 1]  # as mpirun gave them
