"""snnbench.dev.hpc_example edits NEST's hpc_benchmark example's text: each edit checked, none silent."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from snnbench.dev import hpc_example

# The lines of nest-simulator v3.10's pynest/examples/hpc_benchmark.py that the edits replace.
EXAMPLE = """params = {"num_threads": 4, "scale": 1.0, "simtime": 250.0, "presimtime": 50.0,
    "path_name": ".", "log_file": "log"}
    nest.resolution = params["dt"]
    nest.SetDefaults("static_synapse_hpc", {"delay": 1.5})
    nest.SetDefaults("stdp_pl_synapse_hom_hpc", {})
    CE = int(1.0 * NE / params["scale"])
    CI = int(1.0 * NI / params["scale"])
    JE_pA = conversion_factor * brunel_params["JE"]
        print(nest.kernel_status)
"""


def options(**changes) -> argparse.Namespace:
    base = dict(threads=1, scale=5.8, sim_ms=500.0, presim_ms=100.0, indegree_scale=0.1, seed=55, synapses="plain")
    return argparse.Namespace(**(base | changes))


def test_the_edits_set_snnbenchs_settings_and_plain_synapses():
    text = hpc_example.edit(EXAMPLE, options(), Path("/out"))
    assert '"scale": 5.8' in text and '"num_threads": 1' in text and '"simtime": 500.0' in text
    assert "CE = int(0.1 * NE" in text and 'brunel_params["JE"] / 0.1' in text and "nest.rng_seed = 55" in text
    assert "_hpc" not in text and "HPC_EXAMPLE_STATUS" in text
    assert "static_synapse_hpc" in hpc_example.edit(EXAMPLE, options(synapses="hpc"), Path("/out"))


def test_a_changed_example_fails_naming_what_it_lacks():
    with pytest.raises(SystemExit, match="CI = int"):
        hpc_example.edit(EXAMPLE.replace("CI = int", "CI=int"), options(), Path("/out"))
