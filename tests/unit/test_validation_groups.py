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


def test_runs_flagged_one_by_one_are_counted_per_reference_drawn_anew():
    values = np.random.default_rng(4).normal(size=120)

    def above_every_member(run, members) -> bool:  # a conformal rule: chance 1 / 21 for a run drawn as 20 members
        return bool(values[run] > values[members].max())

    for drawn, rest in validation_groups.reference_draws(120, 20, 3):
        assert len(drawn) == 20 and sorted([*drawn, *rest]) == list(range(120))  # the rest: every run not drawn
    counts = validation_groups.flagged_per_reference(120, 20, 30, above_every_member)
    assert len(counts) == 30 and all(0 <= c <= 100 for c in counts)
    assert 0.02 < np.mean(counts) / 100 < 0.08  # about 1 / 21 over references, though one alone may say 0 or 20
    assert counts == validation_groups.flagged_per_reference(120, 20, 30, above_every_member)
