"""The workflow and `python -m snnbench.planning.check` refuse a bad config in the same lines, which
name the config file and the key (one planner: snnbench.planning.campaign). Each bad config is given with
--configfile on top of config/config.yaml, as users do; Snakemake runs once per config (a dry run,
about 2 s), all of them in one module-scoped pass, two at a time."""

from __future__ import annotations

import copy
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from conftest import VENV_BIN, copy_workflow, experiment
from snnbench.planning import check

WHEELS = {"nest-3.9": {"pip": "nest-simulator==3.9.0.post0.dev14"}}


def _pd14(**changes) -> dict:
    return experiment(pd14={**experiment()["pd14"], **changes})


def _training(**block) -> dict:
    training = {"frameworks": ["torch"], "n": [8], "T": [5], "batch": [1], **block}
    return {"name": "t", "model": "snn-training", "snn_training": training}


def _with(**top) -> dict:
    """The tests' experiment with these top-level keys."""
    return {"experiments": [experiment()], **top}


def _comparison(tables, panels=("real_time_factor",)) -> dict:
    return {"comparisons": [{"name": "cmp", "tables": list(tables), "panels": list(panels)}]}


# id -> (the --configfile's content, the key the first problem line names)
BAD = {
    "unknown-top-level-key": ({"experiments": [experiment()], "figurse": {}}, "(top level)"),
    "unknown-experiment-key": ({"experiments": [experiment(threads=[1])]}, "experiments[0]"),
    "wrong-type": ({"experiments": [experiment(time_limit_min="ten")]}, "experiments[0].time_limit_min"),
    "bad-enum": ({"experiments": [experiment(scaling="fast")]}, "experiments[0].scaling"),
    "unknown-simulator": ({"experiments": [experiment(simulators=["nset"])]}, "experiments[0].simulators[0]"),
    "seed-55.0": ({"experiments": [experiment(seeds=[55.0])]}, "experiments[0].seeds[0]"),
    "no-seeds": ({"experiments": [experiment(seeds=[])]}, "experiments[0].seeds"),
    "threads-1.0": (
        {"experiments": [experiment(resources={"threads_per_rank": [1.0]})]},
        "experiments[0].resources.threads_per_rank[0]",
    ),
    "name-with-slash": ({"experiments": [experiment(name="a/b")]}, "experiments[0].name"),
    "both-neuron-scales": ({"experiments": [_pd14(neuron_scale_per_vp=0.01)]}, "experiments[0].pd14"),
    "t-sim-off-resolution": ({"experiments": [_pd14(t_sim_ms=0.15)]}, "pd14.t_sim_ms"),
    "model-too-small": ({"experiments": [_pd14(neuron_scale=1e-5)]}, "pd14.neuron_scale"),
    "repeated-simulators": ({"experiments": [experiment(simulators=["nest", "nest"])]}, "simulators"),
    "repeated-seeds": ({"experiments": [experiment(seeds=[3, 3])]}, "seeds"),
    "repeated-names": ({"experiments": [experiment(), experiment()]}, "experiments[].name"),
    "slurm-shell": ({"experiments": [experiment()], "slurm": {"partition": "a;b"}}, "slurm.partition"),
    "validation-type": ({"experiments": [experiment()], "validation": {"ks_alpha": "x"}}, "validation.ks_alpha"),
    "archive-not-tar": ({"experiments": [experiment()], "archives": {"far": "far.zip"}}, "archives.far"),
    "unknown-panel": (
        _with(figures={"experiment": {"scaling": ["nope"]}}),
        "figures.experiment.scaling",
    ),
    "figures-unknown-experiment": (
        _with(figures={"experiments": ["ghost"]}),
        "figures.experiments",
    ),
    "comparison-unknown-table": (
        _with(figures=_comparison(["ghost"])),
        "figures.comparisons",
    ),
    "comparison-unknown-archive": (
        _with(figures=_comparison(["far/unit"])),
        "figures.comparisons",
    ),
    "comparison-unknown-panel": (
        _with(figures=_comparison(["unit"], ["nope"])),
        "figures.comparisons (cmp).panels",
    ),
    "build-unknown-key": ({"experiments": [experiment(builds={"b": {"wheel": "x"}})]}, "builds.b"),
    "build-not-nest": ({"experiments": [experiment(builds={"b": {"pip": "numpy==2.4.6"}})]}, "builds.b.pip"),
    "unknown-architecture": (
        {"experiments": [_training(architectures=["resnet"])]},
        "experiments[0].snn_training.architectures[0]: 'resnet' is not one of ['linear', 'conv', 'conv-bn']",
    ),
    "build-for-brian2": ({"experiments": [experiment(simulators=["nest", "brian2-cpp"], builds=WHEELS)]}, "brian2-cpp"),
}


def _problem_lines(output: str) -> list[str]:
    """The refusal: its 'Error in config (...)' header and the problem lines under it."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Error in config ("))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or line.startswith('  File "'):
            break
        block.append(line)
    return block


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """id -> (the workflow's refusal, the checker's), each its lines."""
    workdir = copy_workflow(tmp_path_factory.mktemp("config-messages"))
    for name, (content, _) in BAD.items():
        (workdir / "config" / f"bad-{name}.yaml").write_text(yaml.safe_dump(copy.deepcopy(content)))

    def dry_run(name):
        command = [str(VENV_BIN / "snakemake"), "--profile", "profiles/local", "-n"]
        proc = subprocess.run(
            [*command, "--configfile", f"config/bad-{name}.yaml"], cwd=workdir, capture_output=True, text=True
        )
        assert proc.returncode != 0, f"{name}: the workflow accepted it"
        return proc.stdout + proc.stderr

    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = dict(zip(BAD, pool.map(dry_run, BAD), strict=True))
    found = {}
    for name, output in outputs.items():
        checker = subprocess.run(
            [str(VENV_BIN / "python"), "-m", "snnbench.planning.check", f"config/bad-{name}.yaml"],
            cwd=workdir,
            capture_output=True,
            text=True,
        )
        assert checker.returncode == 1, f"{name}: the checker said {checker.stdout}"
        found[name] = (_problem_lines(output), checker.stdout.splitlines())
    return found


@pytest.mark.parametrize("name", BAD)
def test_workflow_and_checker_refuse_in_the_same_lines_naming_file_and_key(refusals, name):
    workflow, checker = refusals[name]
    assert workflow == checker
    header, first, *_ = workflow
    assert header == f"Error in config (config/bad-{name}.yaml, config/config.yaml):"
    assert BAD[name][1] in first, first
    assert all(len(line) < 800 for line in workflow)


def test_the_checker_says_ok_to_what_the_workflow_plans(workflow_copy, monkeypatch, capsys):
    monkeypatch.chdir(workflow_copy)
    (workflow_copy / "config" / "good.yaml").write_text(yaml.safe_dump({"experiments": [experiment()]}))
    assert check.main(["config/good.yaml"]) == 0
    assert capsys.readouterr().out == "config/good.yaml, config/config.yaml: ok\n"
