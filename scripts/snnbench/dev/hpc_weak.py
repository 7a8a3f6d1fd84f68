"""hpc_benchmark weak scaling on one machine, summarised: `make bench-hpc` runs
config/experiments/hpc-weak-machine.yaml through the workflow (profiles/local), then

    .venv/bin/python -m snnbench.dev.hpc_weak [POINTS_CSV]   (default: results/hpc-weak-machine/points.csv)

prints, per number of virtual processes, the medians over seeds of the points table: neurons and
synapses, construction and simulation times, real-time factor, weak-scaling efficiency
T(1 VP) / T(v) of the simulation phase, peak memory (all ranks), rates, the largest spike-count
correlation, and the sampled E->E weights after the run (mean, moved fraction).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

DEFAULT_TABLE = Path("results/hpc-weak-machine/points.csv")
COLUMNS = {
    "num_neurons": "neurons",
    "num_synapses": "synapses",
    "construction_s": "construction s",
    "time_simulate_s": "simulate s",
    "real_time_factor": "RTF",
    "efficiency": "efficiency",
    "peak_rss_mb_sum": "peak MB",
    "rate_E_hz": "E Hz",
    "rate_I_hz": "I Hz",
    "max_correlation": "max corr",
    "ee_weight_mean_pA": "w mean pA",
    "ee_weights_moved_fraction": "w moved",
}


def medians(points: pd.DataFrame) -> pd.DataFrame:
    """Medians over seeds per VP count of the valid points, with the weak-scaling efficiency."""
    ok = points[points["valid"].astype(bool)].copy()
    ok["construction_s"] = ok["time_create_s"] + ok["time_connect_s"]
    ok["max_correlation"] = ok.filter(like="correlation_").max(axis=1)
    table = ok.groupby("vps")[[c for c in COLUMNS if c in ok and c != "efficiency"]].median()
    table.insert(table.columns.get_loc("real_time_factor") + 1, "efficiency", 0.0)
    table["efficiency"] = table["time_simulate_s"].iloc[0] / table["time_simulate_s"]
    table["seeds"] = ok.groupby("vps")["seed"].count()
    return table.rename(columns=COLUMNS)


def main(argv: list[str]) -> None:
    path = Path(argv[0]) if argv else DEFAULT_TABLE
    if not path.exists():
        sys.exit(f"{path}: no points table (run `make bench-hpc`)")
    points = pd.read_csv(path)
    failed = points[~points["valid"].astype(bool)]
    for _, row in failed.iterrows():
        print(f"not a result: {row['path']} ({row['status']}; {row.get('activity_problems') or ''})")
    print(f"{path}: medians over seeds per VP count ({len(points) - len(failed)} valid points)")
    print(medians(points).to_string(float_format=lambda v: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"))


if __name__ == "__main__":
    main(sys.argv[1:])
