"""The registries' strings as imports (snnbench.dev.registry_imports, run by `make lint`): every string
resolves to a module and attribute, the plugins named by the SNNBENCH_* variables among them, and a
string that names nothing is reported. tests/e2e/test_lint.py runs the contracts on them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from snnbench import families
from snnbench.dev import registry_imports
from snnbench.dev.registry_imports import Edge
from snnbench.network import models, simulators

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def plugins(monkeypatch):
    monkeypatch.setenv(models.EXTRA_VARIABLE, "two_populations=two_populations:TwoPopulations")
    monkeypatch.setenv(simulators.EXTRA_VARIABLE, "nest-plugin=nest_plugin:SIMULATOR")
    monkeypatch.syspath_prepend(str(TESTS / "models"))
    monkeypatch.syspath_prepend(str(TESTS / "simulators"))
    yield
    for module in ("two_populations", "nest_plugin"):
        sys.modules.pop(module, None)
    models.get.cache_clear()
    families.get.cache_clear()


def test_every_registry_string_resolves():
    found = registry_imports.edges()
    assert [edge.string for edge in found if not registry_imports.resolves(edge)] == []
    importers = {edge.importer for edge in found}
    assert {"snnbench.families", "snnbench.network.models", "snnbench.network.simulators"} <= importers
    # Every package simulator's builders and every package model are among them.
    strings = {edge.string for edge in found}
    assert {s for sim in simulators.SIMULATORS.values() for s in sim.builders.values()} <= strings
    assert set(models.MODELS.values()) <= strings


def test_the_simulators_name_the_models_they_build():
    """A package model names no simulator's module; the simulators' registry names the models it builds."""
    for name in models.MODELS:
        assert models.get(name).builders == {}
    assert simulators.builder("genn", "multi_area_model") == "snnbench.network.simulators.genn.multi_area:MultiAreaGenn"


def test_plugins_named_by_the_variables_are_resolved(plugins):
    found = registry_imports.edges()
    strings = {edge.string for edge in found}
    assert {"two_populations:TwoPopulations", "nest_plugin:SIMULATOR", "nest_plugin:PluginBackend"} <= strings
    assert all(registry_imports.resolves(edge) for edge in found)


@pytest.mark.parametrize(
    "string", ["snnbench.network.models.pd14:NoSuchModel", "snnbench.a.b", "no_such_plugin:SIMULATOR"]
)
def test_a_string_naming_nothing_is_refused(string):
    assert not registry_imports.resolves(Edge("snnbench.families", string, "test"))
