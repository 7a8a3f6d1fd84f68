"""The first run a user makes: `make run`'s experiment (config/config.yaml) end to end, every point valid
(issue 52: both 2-thread points were judged invalid by a spread from two seeds on every machine)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import REPO, copy_workflow, snakemake

pytestmark = pytest.mark.slow


def test_the_default_experiment_runs_and_every_point_is_valid(tmp_path):
    workdir = copy_workflow(tmp_path)
    snakemake(workdir)
    experiment = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["experiments"][0]
    points = pd.read_csv(workdir / "results" / experiment["name"] / "points.csv")
    expected = len(experiment["seeds"]) * len(experiment["resources"]["threads_per_rank"])
    assert len(points) == expected and set(points["status"]) == {"ok"}
    shown = points[["shape", "seed", "validation_problems", "activity_problems"]].to_string()
    assert points["valid"].all(), shown
    assert sorted(points["threads_per_rank"].unique()) == sorted(experiment["resources"]["threads_per_rank"])
    assert points["efficiency"].notna().all()  # every shape drawn in the scaling figure
    assert set(points["simulator_verdict"]) == {"reference"}
    for figure in ("scaling", "simulators", "validation"):
        assert (workdir / "results" / experiment["name"] / "figures" / f"{figure}.png").stat().st_size > 0
