"""Real MPI ranks on this machine (mpirun): 2 ranks x 1 thread against 1 rank x 2 threads.

Both have two virtual processes, and NEST's random streams belong to virtual processes, not to
ranks or threads: the network and its activity must come out the same.
"""

import json

import pytest
import yaml
from conftest import REPO, snakemake

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (REPO / ".venv-nest-mpi" / ".installed").exists(),
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


def test_two_ranks_match_two_threads(workflow_copy):
    (workflow_copy / "config" / "mpi.yaml").write_text(yaml.safe_dump({"experiments": [EXPERIMENT]}))
    two = "results/mpi/nest/nodes1_ranks{}_threads{}/N0.05_K0.1/seed3/record.json"
    snakemake(workflow_copy, two.format(2, 1), two.format(1, 2), "--configfile", "config/mpi.yaml")
    ranks = json.loads((workflow_copy / two.format(2, 1)).read_text())
    threads = json.loads((workflow_copy / two.format(1, 2)).read_text())
    assert ranks["status"] == threads["status"] == "ok", (ranks["failure"], threads["failure"])

    assert len(ranks["ranks"]) == 2 and ranks["simulator"]["have_mpi"]
    # Each rank holds part of the network; together they hold all of it.
    assert 0 < ranks["ranks"][0]["local_synapses"] < ranks["network"]["num_synapses"]
    assert (
        ranks["network"]["num_synapses"] == threads["network"]["num_synapses"] == ranks["network"]["expected_synapses"]
    )
    assert ranks["activity"]["spikes"] == threads["activity"]["spikes"]
    assert ranks["activity"]["rates_hz"] == pytest.approx(threads["activity"]["rates_hz"])
    # Detailed timers come with the MPI build (the PyPI wheel has none).
    assert "time_update" in ranks["simulator_timers_s"]["simulate"]
