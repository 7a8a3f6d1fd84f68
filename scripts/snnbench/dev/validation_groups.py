"""The group part of `make bench-validation`: the simulator verdict (snnbench.network.judging.group_verdict) of groups
drawn from a pool of runs, against the reference ensemble's runs. Its false positives come from groups of fresh
correct seeds, its power from groups of runs of a deliberate bug.

Groups are drawn without replacement within a group, independently between groups (a run may be in several):
with a pool of 100 and groups of 10, each group is an honest sample of the pool, and the share of groups said to
differ estimates the verdict's error rate at that group size (the groups are not independent of one another, so
the count is a description of these runs, not a binomial trial of its own).

Both rules hold their level over references, not for each one: every group and every run is judged against the
same reference, and how that reference fell moves all their verdicts together. Their false positives are therefore
also counted against references drawn anew out of all correct runs (other_references, flagged_per_reference).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.network import activity, validation
from snnbench.network.judging import group_verdict

SEED = 7  # the draws of groups: the same runs give the same table


def features(stats: list[dict], populations: list[dict], min_samples: int) -> pd.DataFrame:
    """One row per run (its stats.npz contents, validation.load, and its record's populations by name), one column
    per `<statistic> <population>`: the features the workflow's simulator verdict compares (group_verdict.features)."""
    rows, whole = [], []
    for index, (point, by_name) in enumerate(zip(stats, populations, strict=True)):
        rows += [{"path": index, **row} for row in validation.compare(point, None, [], min_samples)]
        whole.append({"path": index, **activity.table_columns(list(by_name.values()))})
    return group_verdict.features(pd.DataFrame(rows), pd.DataFrame(whole))


def draws(pool_size: int, groups: int, size: int) -> list[np.ndarray]:
    """`groups` index sets of `size` runs each out of `pool_size`."""
    rng = np.random.default_rng(SEED)
    return [np.sort(rng.choice(pool_size, size=size, replace=False)) for _ in range(groups)]


def verdicts(pool: pd.DataFrame, reference: pd.DataFrame, groups: int, size: int) -> list[dict]:
    """group_verdict.group_test of each drawn group against all of `reference`."""
    return [group_verdict.group_test(pool.iloc[chosen], reference) for chosen in draws(len(pool), groups, size)]


def other_references(reference: pd.DataFrame, pool: pd.DataFrame, references: int, groups: int, size: int) -> list:
    """Groups of the pool said to differ per reference drawn anew: `references` times, as many runs as the
    reference has out of the reference's and the pool's runs together, `groups` groups of `size` out of the rest.
    One reference's count depends much on how that reference happened to fall (every group is judged against
    it); over many the mean share is the verdict's false-positive rate."""
    runs = pd.concat([reference, pool], ignore_index=True)
    return [
        summary(verdicts(runs.iloc[rest], runs.iloc[drawn], groups, size))["differ"]
        for drawn, rest in reference_draws(len(runs), len(reference), references)
    ]


def reference_draws(runs: int, size: int, references: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`references` splits of `runs` runs (the same each time): `size` of them drawn anew as the reference, the
    rest to be judged against it."""
    rng = np.random.default_rng(SEED)
    return [(order[:size], order[size:]) for order in (rng.permutation(runs) for _ in range(references))]


def flagged_per_reference(runs: int, size: int, references: int, flags) -> list[int]:
    """Runs flagged one by one per reference drawn anew (reference_draws): `flags(run, members)` says whether the
    per-point rule flags run `run` against the runs `members`. A conformal rule flags a run drawn as the reference
    with chance at most 1 / (size + 1) on average over references, not for each one: see docs/figures.md."""
    return [sum(flags(run, drawn) for run in rest) for drawn, rest in reference_draws(runs, size, references)]


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


def print_other_references(reference: pd.DataFrame, pool: pd.DataFrame, flags, args) -> None:
    """The pool's false positives against `args.other_references` references drawn anew out of the reference's and
    the pool's runs (features: rows of `reference`, then of `pool`), as groups of `args.group_size`
    (other_references) and one by one (flagged_per_reference; `flags(run, members)` by those rows' positions)."""
    counts = other_references(reference, pool, args.other_references, args.groups, args.group_size)
    print(
        f"{'':32s} against {len(counts)} other references of {len(reference)} drawn from all "
        f"{len(reference) + len(pool)} NEST runs: groups said to differ per reference median "
        f"{np.median(counts):g} / {args.groups}, mean {np.mean(counts) / args.groups:.1%}, at most 1 in "
        f"{sum(count <= 1 for count in counts)} of {len(counts)}, most {max(counts)}"
    )
    size = len(reference)
    counts = flagged_per_reference(size + len(pool), size, args.other_references, flags)
    print(
        f"{'':32s} one by one against the same {len(counts)} references: flagged per reference median "
        f"{np.median(counts):g} / {len(pool)}, mean {np.mean(counts) / len(pool):.1%} (bound 1 / {size + 1} = "
        f"{1 / (size + 1):.1%}), least {min(counts)}, most {max(counts)}"
    )
