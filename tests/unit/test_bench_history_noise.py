"""make bench-history-noise's pure parts: the plan of runs, the comparisons counted, the slowdown's step told
apart from the others (on a hand-made history; the bench itself runs the workflow and is not a test)."""

from __future__ import annotations

import pandas as pd
from snnbench.dev import bench_history_noise as bench
from snnbench.results import steps


def test_the_plan_alternates_the_burner_and_slows_the_last_runs():
    runs = bench.plan_runs(unchanged=8, slowed=3)
    assert [r.burner for r in runs] == [i % 2 == 0 for i in range(1, 12)]  # off first: a quiet reference
    assert [r.slowed for r in runs] == [False] * 8 + [True] * 3
    assert len({r.commit for r in runs}) == 11 and all(len(r.commit) == 40 for r in runs)
    assert [r.commit_utc for r in runs] == sorted(r.commit_utc for r in runs)  # the history's order of commits


def history_of(runs: list[bench.Run], slow: float) -> pd.DataFrame:
    """One series, three seeds per run: simulate 1.0 s (and its CPU time) with a little noise, x slow from the
    slowed runs on; other phases flat."""
    rows = []
    for run in runs:
        for seed, wobble in enumerate((0.99, 1.0, 1.01), start=1):
            time = wobble * (slow if run.slowed else 1.0) * (1 + 0.002 * (run.index % 3))
            rows.append(
                {
                    "series": "s",
                    "run": run.label,
                    "seed": str(seed),
                    "git_commit": run.commit,
                    "git_commit_utc": run.commit_utc,
                    "started_utc": run.commit_utc,
                    "simulator_version": "3.10",
                    "build": "",
                    "valid": True,
                    "disturbed": run.burner,
                    **{metric: time if metric in bench.MOVED else 2.0 * wobble for metric in bench.TIMED},
                }
            )
    return pd.DataFrame(rows)


def test_the_slowdown_is_found_where_it_begins_and_the_comparisons_are_counted():
    runs = bench.plan_runs(unchanged=8, slowed=3)
    table = pd.DataFrame([{**vars(r), "commit": r.commit[:10]} for r in runs])
    past = history_of(runs, slow=1.15)
    found = steps.all_steps(past, bench.TIMED)
    rows = bench.slowdown(past, found, table).set_index("metric")
    assert rows.loc["cpu_simulate_s", "step at the slowdown"] == "x1.150"
    assert abs(rows.loc["time_simulate_s", "medians slowed/unchanged"] - 1.15) < 0.01
    assert (rows["other steps"] == "").all()
    counted = bench.comparisons(past, bench.TIMED)  # quiet runs 1, 3, ..., 11: 6 commits, 1 version
    assert counted == {
        "series": 1,
        "metrics": len(bench.TIMED),
        "fits": len(bench.TIMED),
        "pairs": 5 * len(bench.TIMED),
    }
    lines = bench.judged(past, table, keep_disturbed=True)  # all 11 runs: 10 pairs per metric
    assert any(f"{10 * len(bench.TIMED)} neighbouring positions" in line for line in lines)
