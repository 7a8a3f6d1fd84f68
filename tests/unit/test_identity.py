"""A point's identity is what its process ran: the modules it imported (found, never listed), the
files it read, its environment's key and the simulator's version (snnbench.records.identity).

Each test runs a real child Python on a copy of the package, loading NEST PD14's builder as a rank
does (snnbench.network.run: get_builder), then edits the copy and runs it again."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import jsonschema
import pytest
import yaml
from conftest import REPO, validated
from snnbench import environments, planning
from snnbench.records import identity
from snnbench.run import child as family_child

# What a rank of a NEST PD14 point loads before its phases, then what it reports at its end.
RANK = """
import json
from snnbench.network import run
from snnbench.records import identity
run.get_builder("nest", "pd14")
print(json.dumps(identity.claim([identity.report("3.x")], "env-key")))
"""
BUILDER = "snnbench/network/simulators/nest/pd14.py"
# A family's child (as snnbench.training.run ends): reads an input, reports what it ran in its result.
FAMILY_CHILD = """
import json, sys
from pathlib import Path
from snnbench.records import identity
identity.note_input("/data/shd_train.h5", "d" * 64)
framework = {"name": "torch", "api": "torch", "version": "1.0", "torch_version": "1.0", "time_loop": "unbind"}
result = {"status": "skipped", "reason": "reported, not run", "framework": framework}
result["identity"] = identity.report({"framework": "1.0"})
Path(sys.argv[2], "result.json").write_text(json.dumps(result))
"""


@pytest.fixture
def scripts(tmp_path):
    """A copy of the package, for the child to import and the test to edit."""
    copy = tmp_path / "scripts"
    shutil.copytree(REPO / "scripts" / "snnbench", copy / "snnbench", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def child(code: str, *path) -> dict:
    """What a child Python importing from `path` prints last, as JSON."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNNBENCH_NETWORK_")}
    env |= {"PYTHONPATH": os.pathsep.join(map(str, path)), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def nest_pd14(scripts) -> dict:
    """The provenance entries a NEST PD14 rank on `scripts` reports: benchmark_hash and identity."""
    return child(RANK, scripts)


def edit(scripts, relative: str, line: str = "# edited") -> None:
    path = scripts / relative
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_identity_covers_the_modules_the_rank_imported_and_nothing_else(scripts):
    modules = nest_pd14(scripts)["identity"]["modules"]
    # The driver that times, the builder, the kernel calls it times, the backend base, the model.
    for timed in (
        "snnbench/network/run.py",
        BUILDER,
        "snnbench/network/simulators/nest_kernel.py",
        "snnbench/network/simulators/base.py",
        "snnbench/network/models/pd14.py",
    ):
        assert timed in modules
    assert not any(m.startswith(("snnbench/machine/", "snnbench/records/", "snnbench/paths")) for m in modules)
    assert "snnbench/network/simulators/nest/multi_area.py" not in modules
    # numpy and the standard library, imported too, are the environment's (its key and versions cover them).
    assert all(m.startswith("snnbench/") for m in modules)


def test_code_from_a_sites_own_folder_counts(scripts, tmp_path):
    """A model kept outside the package (registered by SNNBENCH_NETWORK_MODELS) is code of the benchmark."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "site_model.py").write_text("import numpy\n\nRATE_HZ = 8.0\n")
    code = "import json, site_model\nfrom snnbench.records import identity\nprint(json.dumps(identity.code_modules()))"
    modules = child(code, scripts, site)
    assert "site_model.py" in modules and "snnbench/__init__.py" in modules
    assert not any(m.startswith("numpy") for m in modules)


@pytest.mark.parametrize(
    "timed", ["snnbench/network/simulators/nest_kernel.py", "snnbench/network/simulators/base.py", BUILDER]
)
def test_editing_code_the_rank_ran_changes_nest_pd14s_identity(scripts, timed):
    before = nest_pd14(scripts)["benchmark_hash"]
    edit(scripts, timed)
    assert nest_pd14(scripts)["benchmark_hash"] != before


@pytest.mark.parametrize(
    "other",
    [
        "snnbench/network/simulators/nest/multi_area.py",  # another model's builder on NEST
        "snnbench/network/simulators/nest/hpc_benchmark.py",
        "snnbench/machine/energy.py",  # imported by the rank, but decides nothing of what it simulates or times
        "snnbench/paths.py",
    ],
)
def test_editing_code_that_decides_nothing_of_the_run_keeps_it(scripts, other):
    before = nest_pd14(scripts)["benchmark_hash"]
    edit(scripts, other)
    assert nest_pd14(scripts)["benchmark_hash"] == before


def test_a_helper_the_builder_starts_importing_counts_without_being_listed(scripts):
    helper = "snnbench/network/simulators/pd14_cells.py"
    (scripts / helper).write_text("GAIN = 1.0\n")
    builder = scripts / BUILDER
    builder.write_text(
        builder.read_text().replace(
            "import numpy as np\n", "import numpy as np\n\nfrom snnbench.network.simulators import pd14_cells\n", 1
        )
    )
    first = nest_pd14(scripts)
    assert helper in first["identity"]["modules"]
    (scripts / helper).write_text("GAIN = 2.0\n")
    assert nest_pd14(scripts)["benchmark_hash"] != first["benchmark_hash"]


def test_ranks_inputs_environment_and_version_go_into_the_hash():
    rank = {"modules": {"snnbench/network/run.py": "a" * 64}, "inputs": {}, "simulator_version": "3.9"}
    other_rank = rank | {"inputs": {"/results/e/network.h5": "b" * 64}}
    claimed = identity.claim([rank, other_rank], "key")
    assert claimed["identity"]["inputs"] == {"/results/e/network.h5": "b" * 64}
    # The same file read from another folder is the same benchmark; other content, another environment
    # or another simulator version is not.
    moved = rank | {"inputs": {"/elsewhere/network.h5": "b" * 64}}
    assert identity.claim([moved], "key")["benchmark_hash"] == claimed["benchmark_hash"]
    changed = rank | {"inputs": {"/results/e/network.h5": "c" * 64}}
    assert identity.claim([changed], "key")["benchmark_hash"] != claimed["benchmark_hash"]
    assert identity.claim([other_rank], "other key")["benchmark_hash"] != claimed["benchmark_hash"]
    assert identity.claim([other_rank | {"simulator_version": "3.10"}], "key") != claimed


def test_a_point_whose_processes_reported_nothing_claims_no_identity():
    claimed = identity.claim([None, {}], "key")
    assert claimed == {"benchmark_hash": None, "identity": {"not_known": identity.NOT_REPORTED}}


def training_point(tmp_path) -> tuple[dict, dict]:
    block = {"frameworks": ["torch"], "n": [512], "T": [100], "batch": [10]}
    cfg = validated({"name": "train", "model": "snn-training", "snn_training": block})
    spec = planning.expand_points(cfg["experiments"][0])[0]
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    paths = {"spec_path": tmp_path / "spec.json", "record_path": tmp_path / "record.json", "log_path": tmp_path / "log"}
    return spec, paths


def test_a_familys_child_reports_what_it_ran_into_its_record(tmp_path, monkeypatch):
    (tmp_path / "family_child.py").write_text(FAMILY_CHILD)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(REPO / "scripts")]))
    spec, paths = training_point(tmp_path)
    common = {
        "environment": "workflow",
        "module": "family_child",
        "section": "training",
        "keys": ("framework",),
        "spec": spec,
    }
    rec = family_child.run_point(**paths, time_limit_s=60, skip_reason=lambda s: None, **common)
    prov = json.loads(paths["record_path"].read_text())["provenance"]  # written, so valid by the schema
    assert prov["benchmark_hash"] == rec["provenance"]["benchmark_hash"] is not None
    assert prov["identity"]["environment_key"] == environments.key("workflow")
    assert prov["identity"]["inputs"] == {"/data/shd_train.h5": "d" * 64}
    assert "family_child.py" in prov["identity"]["modules"]
    assert prov["identity"]["simulator_version"] == {"framework": "1.0"}

    # Skipped before any child: nothing ran, so the record claims no identity.
    skipped = family_child.run_point(**paths, time_limit_s=60, skip_reason=lambda s: "not here", **common)
    assert skipped["provenance"]["benchmark_hash"] is None and "not_known" in skipped["provenance"]["identity"]


def test_code_run_from_a_copy_removed_before_the_end_is_named_not_read(tmp_path):
    """INM-6's simulation runs from a temporary copy of its tree (with the config.py it needs), removed before
    the rank reports: the module is named, its content is the environment's."""
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "config.py").write_text("base_path = '.'\n")
    sys.path.insert(0, str(copy))
    try:
        import config  # noqa: PLC0415 (the copy's module, as INM-6's code imports it)

        shutil.rmtree(copy)
        modules = identity.code_modules({"config": config})
        assert modules == {"config.py": identity.REMOVED}
        schema = yaml.safe_load((REPO / "workflow/schemas/record.schema.yaml").read_text())
        provenance = schema["properties"]["provenance"]["properties"]
        jsonschema.validate(modules, provenance["identity"]["properties"]["modules"])  # the record keeps it
    finally:
        sys.path.remove(str(copy))
        sys.modules.pop("config", None)


@pytest.mark.parametrize("by_name", [False, True], ids=["script", "module"])
def test_multiprocessings_alias_of_the_main_module_counts_once(tmp_path, by_name):
    """A process whose main module multiprocessing re-ran (spawn's fix-up, as brian2's cold Cython cache
    does) holds it as __main__ and as __mp_main__: the same code, counted once, so that a point with a
    cold cache and one with a warm cache have one benchmark_hash."""
    import importlib.util  # noqa: PLC0415
    import types  # noqa: PLC0415

    if by_name:  # `python -m snnbench.network.run`: runpy.run_module's spec
        file = REPO / "scripts" / "snnbench" / "network" / "run.py"
        spec, expected = importlib.util.spec_from_file_location("snnbench.network.run", file), "snnbench/network/run.py"
    else:  # a script: runpy.run_path sets no spec
        file, spec, expected = tmp_path / "driver.py", None, "driver.py"
        file.write_text("print('a driver')\n")
    main = types.ModuleType("__mp_main__")
    main.__file__, main.__spec__ = str(file), spec
    assert identity.code_modules({"__main__": main, "__mp_main__": main}) == {expected: identity.file_sha256(file)}
