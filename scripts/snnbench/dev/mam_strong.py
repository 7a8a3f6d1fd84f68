"""The multi-area model's strong scaling on one machine, summarised: `make bench-mam` runs
config/experiments/mam-machine.yaml through the workflow (profiles/local), then

    .venv/bin/python -m snnbench.dev.mam_strong [EXPERIMENT]   (default: mam-machine)

prints, per simulator and shape, the medians over seeds of the points table: neurons and synapses,
construction (setup to prepare) and simulation times, real-time factor, peak memory per virtual
process, mean rate and its range over the populations, and the mean-field theory's mean rate; then the
time the description took to derive (rule describe_network's own benchmark: once, every later point
and run reads the file) and what the theory took inside it.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pandas as pd

from snnbench.paths import NETWORK_DESCRIPTION

COLUMNS = {
    "num_neurons": "neurons",
    "num_synapses": "synapses",
    "construction_s": "construction s",
    "time_simulate_s": "simulate s",
    "real_time_factor": "RTF",
    "peak_mb_per_vp": "peak MB/VP",
    "mean_rate_hz": "mean Hz",
    "lowest_rate_hz": "lowest Hz",
    "highest_rate_hz": "highest Hz",
    "theory_mean_rate_hz": "theory Hz",
}
CONSTRUCTION = ("time_setup_s", "time_create_s", "time_connect_s", "time_prepare_s")


def medians(points: pd.DataFrame) -> pd.DataFrame:
    """Medians over seeds per simulator and shape of the valid points."""
    ok = points[points["valid"].astype(bool)].copy()
    rates = ok[[c for c in ok if c.startswith("rate_") and c.endswith("_hz")]]
    theory = ok[[c for c in ok if c.startswith("theory_rate_")]]
    ok["construction_s"] = ok[list(CONSTRUCTION)].sum(axis=1)
    ok["peak_mb_per_vp"] = ok["peak_rss_mb_sum"] / ok["vps"]
    ok["mean_rate_hz"] = rates.mean(axis=1)
    ok["lowest_rate_hz"], ok["highest_rate_hz"] = rates.min(axis=1), rates.max(axis=1)
    ok["theory_mean_rate_hz"] = theory.mean(axis=1) if not theory.empty else float("nan")
    table = ok.groupby(["simulator", "shape"])[[c for c in COLUMNS if c in ok]].median()
    table["seeds"] = ok.groupby(["simulator", "shape"])["seed"].count()
    return table.rename(columns=COLUMNS)


def derivation_lines(points: pd.DataFrame) -> list[str]:
    """How long each description took to derive, from rule describe_network's benchmark file."""
    lines = []
    for key in sorted(points["network_description"].dropna().unique()):
        description = Path(NETWORK_DESCRIPTION.format(model="multi_area_model", description=key))
        benchmark = Path("benchmarks/networks/multi_area_model") / f"{key}.tsv"
        wall = "not measured (no benchmark file)"
        if benchmark.exists():
            rows = list(csv.DictReader(benchmark.open(), delimiter="\t"))
            wall = f"{float(rows[-1]['s']):.1f} s, {float(rows[-1]['max_rss']):.0f} MB"
        inside = json.loads(description.read_text()) if description.exists() else {}
        lines.append(
            f"description {key}: derived once in {wall} (INM-6's model {inside.get('derived_s')} s, theory "
            f"{inside.get('theory_s')} s); every later point and run reads the file"
        )
    return lines


def main(argv: list[str]) -> None:
    experiment = argv[0] if argv else "mam-machine"
    path = Path("results") / experiment / "points.csv"
    if not path.exists():
        sys.exit(f"{path}: no points table (run `make bench-mam`)")
    points = pd.read_csv(path, low_memory=False)
    for _, row in points[~points["valid"].astype(bool)].iterrows():
        reasons = [row.get(k) for k in ("failure_reason", "activity_problems", "validation_problems")]
        why = next((r for r in reasons if isinstance(r, str) and r), "")
        print(f"not a result: {row['path']} ({row['status']}; {why})")
    print(f"{path}: medians over seeds per simulator and shape")
    print(medians(points).to_string(float_format=lambda v: f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"))
    print("\n".join(derivation_lines(points)))


if __name__ == "__main__":
    main(sys.argv[1:])
