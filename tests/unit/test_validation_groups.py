"""make bench-validation's groups (snnbench.dev.validation_groups): draws and the simulator verdict per group."""

from __future__ import annotations

import numpy as np
import pandas as pd
from snnbench.dev import validation_groups


def runs(n: int, shift: float, seed: int) -> pd.DataFrame:
    """n runs x 6 features, the first three `shift` SDs off."""
    values = np.random.default_rng(seed).normal(size=(n, 6))
    values[:, :3] += shift
    return pd.DataFrame(values, columns=[f"{s} L{i}" for s in ("rate", "correlation") for i in range(3)])


def test_groups_are_drawn_without_repeats_and_the_same_each_time():
    drawn = validation_groups.draws(60, 20, 10)
    assert len(drawn) == 20 and all(len(set(g)) == 10 and g.max() < 60 for g in drawn)
    assert all((a == b).all() for a, b in zip(drawn, validation_groups.draws(60, 20, 10), strict=True))


def test_groups_of_a_shifted_pool_differ_and_those_of_the_reference_mostly_not():
    reference = runs(20, 0.0, seed=1)
    same = validation_groups.summary(validation_groups.verdicts(runs(60, 0.0, seed=2), reference, 20, 10))
    shifted = validation_groups.summary(validation_groups.verdicts(runs(20, 2.5, seed=3), reference, 10, 10))
    assert same["groups"] == 20 and same["differ"] <= 4
    assert shifted["differ"] == 10 and shifted["named"].startswith("rate L")  # the shifted features named
    assert "correlation" not in shifted["named"]


def test_other_references_count_each_references_groups_said_to_differ():
    reference, pool = runs(20, 0.0, seed=1), runs(60, 0.0, seed=2)
    counts = validation_groups.other_references(reference, pool, 5, 20, 10)
    assert len(counts) == 5 and all(0 <= c <= 20 for c in counts)
    assert np.mean(counts) / 20 <= 0.2  # runs drawn as the reference: about ALPHA (5 %) of the groups
    assert counts == validation_groups.other_references(reference, pool, 5, 20, 10)  # the same draws each time
    shifted = validation_groups.other_references(reference, runs(60, 2.5, seed=3), 3, 20, 10)
    assert sum(shifted) > sum(counts)  # a pool unlike the reference: its groups differ from references of both
