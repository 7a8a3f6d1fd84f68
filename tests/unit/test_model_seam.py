"""The network models' seam: a model kept outside the package (tests/models/two_populations.py),
registered by SNNBENCH_NETWORK_MODELS, is a family, a config block checked by the schema with its
defaults, and a model size; the package's own models keep their rules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import config_problems, experiment, validated
from snnbench import families
from snnbench.network import models

MODELS_DIR = Path(__file__).resolve().parents[1] / "models"
PLUGIN = "two_populations=two_populations:TwoPopulations"


@pytest.fixture
def plugin(monkeypatch):
    monkeypatch.setenv(models.EXTRA_VARIABLE, PLUGIN)
    monkeypatch.syspath_prepend(str(MODELS_DIR))
    yield
    sys.modules.pop("two_populations", None)
    models.get.cache_clear()
    families.get.cache_clear()


def two_populations(**block) -> dict:
    exp = experiment(model="two_populations", **{"two_populations": {"neuron_scale": 0.5, "indegree_scale": 0.5}})
    exp.pop("pd14")
    exp["two_populations"].update(block)
    return exp


def test_a_registered_model_is_a_family_with_its_block_and_defaults(plugin):
    assert "two_populations" in families.names()
    config = validated(two_populations())
    block = config["experiments"][0]["two_populations"]
    assert block["t_sim_ms"] == 200.0 and block["input"] == "poisson"  # the model's own defaults
    size = models.get("two_populations").size(block)
    assert size.num_neurons.tolist() == [400, 100] and size.total_synapses == 500 * (40 + 10)


def test_a_registered_models_block_is_checked_by_the_schema(plugin):
    found = config_problems(two_populations(tau_m=10))
    assert found and found[0].startswith("experiments[0].two_populations: Additional properties")
    missing = two_populations()
    missing.pop("two_populations")
    assert any("'two_populations' is a required property" in line for line in config_problems(missing))
    both = config_problems(two_populations(neuron_scale_per_vp=0.1))
    assert any("exclude each other" in line for line in both)


def test_a_model_without_a_builder_for_a_simulator_is_refused(plugin):
    found = config_problems(two_populations() | {"simulators": ["brian2-cpp"]})
    assert any("model two_populations has no builder for simulators brian2-cpp (it runs on nest)" in p for p in found)


def test_without_the_variable_the_model_is_unknown_and_pd14_keeps_its_block():
    assert "two_populations" not in families.names()
    assert config_problems(two_populations())
    no_block = experiment()
    no_block.pop("pd14")
    assert any("'pd14' is a required property" in line for line in config_problems(no_block))
