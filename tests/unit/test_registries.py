"""One source per fact: the schema's and the Makefile's lists equal the registries they name."""

import fnmatch
import re

import pytest
import yaml
from conftest import REPO, TINY, config_problems, experiment
from snnbench import environments, families, paths, planning
from snnbench.network.simulators import SIMULATORS
from snnbench.training.spec import FRAMEWORKS


def schema() -> dict:
    """The config schema as the planner checks with it: the file and the network models' blocks."""
    return families.config_schema()


def make_variable(name: str) -> list[str]:
    match = re.search(rf"^{name} :?= (.*)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    return match.group(1).split()


def test_schema_simulators_are_the_registry():
    """The schema file names no simulator: the enum is made from the registry (plugins included)."""
    enum = schema()["$defs"]["experiment"]["properties"]["simulators"]["items"]["enum"]
    assert enum == list(SIMULATORS)
    assert "nest" not in (REPO / "workflow" / "schemas" / "config.schema.yaml").read_text().split("enum:")[1][:200]


def test_schema_frameworks_are_the_registry():
    block = schema()["$defs"]["training_experiment"]["properties"]["snn_training"]["properties"]
    assert sorted(block["frameworks"]["items"]["enum"]) == sorted(FRAMEWORKS)


def test_schema_models_are_the_families():
    assert sorted(schema()["$defs"]["experiment"]["properties"]["model"]["enum"]) == sorted(families.names())
    assert schema()["$defs"]["experiment"]["properties"]["model"]["default"] == families.DEFAULT


def test_schema_data_strategies_and_models_are_the_registries():
    from snnbench.data import spec as data_spec

    block = schema()["$defs"]["data_experiment"]["properties"]["snn_data"]["properties"]
    assert sorted(block["strategies"]["items"]["enum"]) == sorted(data_spec.STRATEGIES)
    assert sorted(block["tensors"]["items"]["enum"]) == sorted(data_spec.TENSORS)
    assert sorted(block["models"]["items"]["enum"]) == sorted(data_spec.MODELS)
    assert sorted(block["datasets"]["items"]["enum"]) == sorted(data_spec.DATASETS)


def test_every_family_has_its_schema_block():
    items = schema()["properties"]["experiments"]["items"]
    families_in_schema, node = [], items
    while "if" in node:
        families_in_schema.append(node["if"]["properties"]["model"]["const"])
        node = node["else"]
    assert sorted(families_in_schema) == sorted(families.FAMILIES)
    network = schema()["$defs"]["experiment"]["properties"]
    assert all(name in network for name in families.names() if name not in families.FAMILIES)


def test_every_environment_named_has_its_file():
    named = {s.environment for s in SIMULATORS.values()} | {s.mpi_environment for s in SIMULATORS.values()}
    named |= {f.environment for f in FRAMEWORKS.values()} | set(environments.MAIN)
    named |= {families.get("snn-data").environment({})}
    assert {f"{env}.yaml" for env in named - {None}} <= {p.name for p in paths.ENVS.glob("*.yaml")}


def test_makefile_environment_lists_are_the_registries():
    """The Makefile lists only .venv's environments; make test and make training-envs take the others
    from the families' registries (snnbench.planning.cpu_environments)."""
    assert make_variable("ENVS") == [f"envs/{env}.yaml" for env in environments.MAIN]
    makefile = (REPO / "Makefile").read_text()
    assert "python -m snnbench.planning.cpu_environments snn-training" in makefile
    for variable in ("TRAINING_ENVS", "NETWORK_ENVS", "DATA_ENV"):
        assert f"{variable} :=" not in makefile


def test_the_cpu_environments_come_from_the_registries():
    from snnbench.planning.cpu_environments import cpu_environments

    # The training frameworks that run on a CPU (lava-dl is documented as unavailable here).
    # NeuroBench's metrics of each point run in their own environment.
    cpu = {f.environment for f in FRAMEWORKS.values() if not f.cuda_only and not f.unavailable} | {"neurobench"}
    assert set(cpu_environments(["snn-training"])) == cpu
    assert cpu_environments(["snn-data"]) == [families.get("snn-data").environment({})]
    # The network simulators that build PD14 without a GPU, their MPI environment too, less .venv's own (a new
    # simulator's environment joins them by its registry entry); brian2cuda needs a GPU.
    network = cpu_environments(["pd14"])
    no_gpu = [s for name, s in SIMULATORS.items() if not s.gpus and "pd14" in s.builders]
    expected = {env for s in no_gpu for env in (s.environment, s.mpi_environment) if env} - set(environments.MAIN)
    assert set(network) == expected and "nest-mpi" in network and "brian2cuda" not in network
    # The multi-area model's own environment: its description is derived there, its reference simulator runs there.
    assert set(cpu_environments(["multi_area_model"])) == {"nest-mpi", "pygenn", "multi-area-model"}
    assert set(cpu_environments([])) == {*network, *cpu, "tonic", "multi-area-model"}


@pytest.mark.parametrize(
    "path", [REPO / "config" / "config.yaml", *sorted((REPO / "config" / "experiments").glob("*.yaml"))], ids=str
)
def test_point_paths_match_the_workflow_pattern(path):
    """Every point's directory is results/<experiment>/<point> with <point> matching its family's
    expression (the workflow's wildcard constraint) and glob (`make rerun-failed`)."""
    config = yaml.safe_load(path.read_text())
    planning.load(config)  # checked, defaults filled in, as the workflow plans it
    for point_dir, spec in planning.plan(config).points.items():
        family = families.of_spec(spec)
        point = point_dir.removeprefix(f"results/{spec['experiment']}/")
        assert re.fullmatch(family.point_regex_str(), point) and fnmatch.fnmatch(point, family.point_glob())


RESOURCES = {"threads", "mem_mb", "nodes", "tasks", "tasks_per_node", "cpus_per_task", "mpi", "gpu"}


@pytest.mark.parametrize(
    "path", [REPO / "config" / "config.yaml", *sorted((REPO / "config" / "experiments").glob("*.yaml"))], ids=str
)
def test_every_family_gives_every_resource_the_execute_rule_asks_for(path):
    """workflow/rules/execute.smk asks each point's family for these resources, whatever the family."""
    config = yaml.safe_load(path.read_text())
    planning.load(config)  # checked, defaults filled in, as the workflow plans it
    for spec in planning.plan(config).points.values():
        assert set(families.of_spec(spec).resources(spec, config)) == RESOURCES, spec["path"]


def test_an_exported_network_is_asked_only_of_the_simulators_whose_entry_reads_it(monkeypatch):
    """pd14.network_seed: the simulators' entries say which builders read NEST's exported network (Simulator.reads)."""
    seeded = {**TINY["pd14"], "network_seed": 1}
    assert config_problems(experiment(simulators=["nest", "brian2-cpp"], pd14=seeded)) == []
    readers = [name for name, simulator in SIMULATORS.items() if "pd14" in simulator.reads]
    assert "genn-cpu" in readers and "nest-inm6" not in readers
    plugin = "nest-plugin=nest_plugin:SIMULATOR"  # its entry names no `reads`
    monkeypatch.setenv("SNNBENCH_NETWORK_SIMULATORS", plugin)
    monkeypatch.syspath_prepend(str(REPO / "tests" / "simulators"))
    problems = config_problems(experiment(simulators=["nest", "nest-plugin"], pd14=seeded))
    assert any(
        f"nest-plugin cannot read an exported network; simulators that can: {', '.join(readers)}" in p for p in problems
    )
