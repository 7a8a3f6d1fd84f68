"""References per machine: every record and row names its machine (site:partition), a point is
compared only with references of its own machine, with that machine's tolerance per metric, and
points of a machine without references are listed, never flagged; figures split by machine."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import config_problems, experiment
from snnbench import figures, planning
from snnbench.dev import synthetic
from snnbench.machine import hardware
from snnbench.records.columns import machine_name
from snnbench.results import regression
from snnbench.tables import collect
from test_figures import BOUNDS, TOLERANCE

EXPERIMENT = synthetic.experiment(name="machines", threads=(1, 2), seeds=(1, 2))


def table(root, machine: str, slow: float = 1.0) -> pd.DataFrame:
    """The synthetic experiment's points as if run on `machine`, its times `slow` times the base."""
    paths = synthetic.write_experiment(root, EXPERIMENT, slow=slow)
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    return points.assign(machine=machine)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("machines")
    return {
        "same": table(root / "same", "alpha:cpu"),
        "slow": table(root / "slow", "alpha:cpu", slow=1.5),
        "other": table(root / "other", "beta:gpu", slow=1.5),
    }


def test_machine_name_from_config_slurm_or_host():
    assert hardware.machine("n1", None, environ={})["name"] == "n1"
    assert hardware.machine("n1", "batch", environ={"SLURM_CLUSTER_NAME": "c"}) == {
        "name": "c:batch",
        "site": "c",
        "partition": "batch",
    }
    config = hardware.machine_environment({"site": "jureca", "partition": "dc-cpu"})
    assert hardware.machine("n1", "batch", environ=config)["name"] == "jureca:dc-cpu"
    assert hardware.machine("n1", "batch", environ=hardware.machine_environment({"site": "jureca"}))["name"] == (
        "jureca:batch"
    )


def test_every_row_names_its_machine(tmp_path):
    paths = synthetic.write_experiment(tmp_path, EXPERIMENT)
    points, _ = collect.collect(paths["records"], BOUNDS, paths["benchmarks"], paths["validations"], TOLERANCE)
    assert "machine" in points and points["machine"].nunique() == 1 and points["machine"].iloc[0]
    old = {"host": {"hostname": "n1"}, "slurm": {"partition": "batch"}}  # a record from before machines
    assert machine_name(old) == "n1:batch" and machine_name({"host": {"hostname": "h"}, "slurm": None}) == "h"


def test_a_point_is_flagged_only_against_its_own_machine(tables):
    same, slow, other = tables["same"], tables["slow"], tables["other"]
    # References of two machines: alpha's say the table is as fast as before, beta's that it is
    # 1.5x slower (beta's references are 1.5x faster than alpha's table).
    references = pd.concat([same, other.assign(machine="beta:gpu", time_simulate_s=other["time_simulate_s"] / 2.25)])
    ratios = regression.compare(references, same, tolerance=0.1)
    assert (ratios["machine"] == "alpha:cpu").all() and not ratios["slowdown"].any()
    assert ratios["ratio_time_simulate_s"].to_numpy() == pytest.approx(1.0)
    # The table 1.5x slower on alpha: flagged against alpha's references.
    assert regression.compare(references, slow, tolerance=0.1)["slowdown"].all()
    # A machine without references: listed, not compared, not flagged.
    ratios = regression.compare(same, other, tolerance=0.1)
    assert (ratios["reference"] == regression.NO_REFERENCE).all() and not ratios["slowdown"].any()
    assert len(ratios) == 2 and ratios["ratio_time_simulate_s"].isna().all()
    assert regression.NO_REFERENCE in regression.render(ratios, 0.1)


def test_tolerances_per_machine_and_metric(tables):
    same, slow = tables["same"], tables["slow"]
    loose = {"alpha:cpu": {metric: 0.6 for metric in regression.METRICS}}
    assert not regression.compare(same, slow, 0.1, tolerances=loose)["slowdown"].any()
    assert regression.compare(same, slow, 0.1, tolerances={"beta:gpu": loose["alpha:cpu"]})["slowdown"].all()
    ratios = regression.compare(same, slow, 0.1, tolerances={"alpha:cpu": {"time_simulate_s": 0.6}})
    assert (ratios["change_time_simulate_s"] == "").all() and (ratios["change_time_total_s"] == "slower").all()


def test_the_command_line_concatenates_baselines_and_reads_tolerances(tables, tmp_path, capsys):
    paths = {}
    for name, points in tables.items():
        paths[name] = tmp_path / f"{name}.csv"
        points.to_csv(paths[name], index=False)
    assert regression.main([f"{paths['other']},{paths['same']}", str(paths["slow"])]) == 1
    tolerances = tmp_path / "tolerances.yaml"
    tolerances.write_text(yaml.safe_dump({"alpha:cpu": dict.fromkeys(regression.METRICS, 0.6)}))
    assert regression.main([str(paths["same"]), str(paths["slow"]), "--tolerances", str(tolerances)]) == 0
    assert regression.main([str(paths["same"]), str(paths["other"])]) == 0
    assert "2 of them with no reference for this machine" in capsys.readouterr().out
    tolerances.write_text("alpha:cpu: {time_simulat_s: 0.6}\n")
    assert regression.main([str(paths["same"]), str(paths["slow"]), "--tolerances", str(tolerances)]) == 2
    err = capsys.readouterr().err
    assert f"Error in tolerances ({tolerances}):\n  alpha:cpu: 'time_simulat_s' is not allowed here (allowed: " in err
    assert "time_simulate_s, time_total_s" in err


def test_config_refuses_bad_references():
    exp = experiment()
    assert config_problems(exp, machine={"site": "jureca", "partition": "dc-cpu"}) == []
    references = {"baseline": ["a.csv", "b.csv"], "tolerances": {"x:y": {"time_total_s": 1}}}
    assert config_problems(exp, regression=references) == []
    [problem] = config_problems(exp, regression={"tolerances": {"jureca:dc": {"time_total_s": -0.1}}})
    assert problem.startswith("regression.tolerances.jureca:dc.time_total_s: -0.1 is less than or equal to")
    assert config_problems(exp, machine={"site": "a b"})[0].startswith("machine.site: 'a b' does not match")
    [problem] = config_problems(exp, regression={"tolerances": {"jureca:dc": {"time_simulat_s": 1}}})
    assert problem.startswith("regression.tolerances.jureca:dc: 'time_simulat_s' is not allowed here (allowed: ")


def test_figures_split_by_machine(tables):
    one = tables["same"]
    assert figures.by_machine(one, "simulator") == (one, "simulator")
    both, series = figures.by_machine(pd.concat([one, tables["other"]]), "simulator")
    assert sorted(set(both[series])) == ["nest @ alpha:cpu", "nest @ beta:gpu"]
    specs = planning.expand_points(EXPERIMENT)
    assert len(both) == 2 * len(specs)
