"""The group part of `make bench-validation`: the simulator verdict (snnbench.network.judging.group_verdict) of groups
drawn from a pool of runs, against the reference ensemble's runs. Its false positives come from groups of fresh
correct seeds, its power from groups of runs of a deliberate bug.

Groups are drawn without replacement within a group, independently between groups (a run may be in several):
with a pool of 60 and groups of 10, each group is an honest sample of the pool, and the share of groups said to
differ estimates the verdict's error rate at that group size (the groups are not independent of one another, so
the count is a description of these runs, not a binomial trial of its own).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.network import validation
from snnbench.network.judging import group_verdict

SEED = 7  # the draws of groups: the same runs give the same table


def features(stats: list[dict], min_samples: int) -> pd.DataFrame:
    """One row per run (stats.npz contents, validation.load), one column per `<statistic> <population>`: the
    run's sample means, the features the workflow's simulator verdict compares."""
    rows = []
    for index, point in enumerate(stats):
        for row in validation.compare(point, None, [], min_samples):
            rows.append({"path": index, **row})
    return group_verdict.features(pd.DataFrame(rows))


def draws(pool_size: int, groups: int, size: int) -> list[np.ndarray]:
    """`groups` index sets of `size` runs each out of `pool_size`."""
    rng = np.random.default_rng(SEED)
    return [np.sort(rng.choice(pool_size, size=size, replace=False)) for _ in range(groups)]


def verdicts(pool: pd.DataFrame, reference: pd.DataFrame, groups: int, size: int) -> list[dict]:
    """group_verdict.group_test of each drawn group against all of `reference`."""
    return [group_verdict.group_test(pool.iloc[chosen], reference) for chosen in draws(len(pool), groups, size)]


def summary(found: list[dict]) -> dict:
    """How many groups were said to differ, and which features were named most often."""
    differ = [f for f in found if f["verdict"].startswith("differs")]
    named = pd.Series([name for f in differ for name in f["differs"]], dtype=object).value_counts()
    return {
        "groups": len(found),
        "differ": len(differ),
        "median_p": float(np.median([f["p"] for f in found])) if found else float("nan"),
        "named": ", ".join(f"{name} ({count})" for name, count in named.head(4).items()),
    }
