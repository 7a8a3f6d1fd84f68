"""Print what `make bench-gpu` measured as one table per family: PD14 per simulator (PyGeNN's
connectivity apart) and scale, medians over seeds of the real-time factor, phases and GPU memory,
with the rates against NEST's at the same scale (any experiment of the run: the procedural
experiments have no NEST of their own); then the snn-training points.

    python -m snnbench.dev.gpu_summary config/experiments/gpu.yaml [config/experiments/snn-training-gpu.yaml ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from snnbench import planning
from snnbench.network.judging import rate_agreement
from snnbench.paths import RESULTS

PD14_COLUMNS = {
    "real_time_factor": "RTF",
    "time_prepare_s": "prepare s",
    "time_presimulate_s": "presim s",
    "time_simulate_s": "sim s",
    "gpu_memory_peak_mb": "GPU MB",
    "num_synapses": "synapses",
}
TRAINING_KEYS = ("framework", "device", "matmul_precision", "n", "T", "batch")
TRAINING_COLUMNS = {"forward_median_s": "forward s", "backward_median_s": "backward s", "step_median_s": "step s"}


def tables(config_files: list[str], results: Path = Path(RESULTS)) -> dict[str, pd.DataFrame]:
    """Each config file's experiments' points.csv (those that exist), by family: pd14, snn-training."""
    found: dict[str, list[pd.DataFrame]] = {}
    for config_file in config_files:
        for experiment in planning.plan_files([config_file]).experiments.values():
            table = results / experiment["name"] / "points.csv"
            if table.exists():
                found.setdefault(experiment["model"], []).append(pd.read_csv(table))
    return {family: pd.concat(frames, ignore_index=True) for family, frames in found.items()}


def simulator_label(points: pd.DataFrame) -> pd.Series:
    """The simulator, with PyGeNN's connectivity (`genn (procedural)`) where a point has one, and
    the threads per spike where procedural points chose them (`genn (procedural, 32 threads/spike)`)."""
    empty = pd.Series(index=points.index, dtype=object)
    connectivity = points.get("connectivity", empty)
    threads = points.get("procedural_threads_per_spike", empty)

    def label(kind: object, per_spike: object) -> str:
        if not isinstance(kind, str) or not kind:
            return ""
        return f" ({kind}, {int(per_spike)} threads/spike)" if pd.notna(per_spike) else f" ({kind})"

    return points["simulator"] + [label(k, t) for k, t in zip(connectivity, threads, strict=True)]


def rates_vs_nest(points: pd.DataFrame) -> pd.DataFrame:
    """Per simulator label and scale: populations whose mean rate agrees with NEST's within the
    seed spread (snnbench.network.judging.rate_agreement), and the largest difference (spikes/s)."""
    merged = points.assign(experiment="gpu", simulator=simulator_label(points))
    table = rate_agreement.agreement(merged)
    if table.empty:
        return pd.DataFrame(columns=["simulator", "neuron_scale", "rates vs NEST"])
    rows = []
    for (simulator, scale), group in table.groupby(["simulator", "neuron_scale"]):
        judged = group.dropna(subset=["agrees"])
        text = f"{int(judged['agrees'].sum())}/{len(judged)} agree" if len(judged) else "not judged (seeds)"
        rows.append(
            {
                "simulator": simulator,
                "neuron_scale": scale,
                "rates vs NEST": f"{text}, max |d| {group['difference_hz'].max():.2f} Hz",
            }
        )
    return pd.DataFrame(rows)


def short_reason(reason: object) -> str:
    """A failure's reason on one line: its first line and, where the log's last lines follow, the last
    (a traceback's exception)."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()] if isinstance(reason, str) else []
    if len(lines) > 1:
        return f"{lines[0].rstrip(':')}: {lines[-1]}"
    return lines[0] if lines else ""


def pd14_summary(points: pd.DataFrame) -> pd.DataFrame:
    points = points.copy()  # a wide table: one new column without pandas' fragmentation warning
    points["label"] = simulator_label(points)
    ok = points[points["status"] == "ok"]
    columns = [c for c in PD14_COLUMNS if c in ok]
    summary = ok.groupby(["neuron_scale", "label"])[columns].median().rename(columns=PD14_COLUMNS)
    summary["seeds"] = ok.groupby(["neuron_scale", "label"])["seed"].nunique()
    failed = (
        points[points["status"] != "ok"].groupby(["neuron_scale", "label"])["failure_reason"].first().map(short_reason)
    )
    summary = summary.join(failed.rename("failed"), how="outer").reset_index()
    agreement = rates_vs_nest(points).rename(columns={"simulator": "label"})
    summary = summary.merge(agreement, on=["label", "neuron_scale"], how="left")
    if "synapses" in summary:
        summary["synapses"] = summary["synapses"].round().astype("Int64")
    for column in ("failed", "rates vs NEST"):
        summary[column] = summary[column].astype(object).fillna("")
    return summary.rename(columns={"label": "simulator", "neuron_scale": "N = K"})


def training_summary(points: pd.DataFrame) -> pd.DataFrame:
    keys = [k for k in TRAINING_KEYS if k in points]
    ok = points[points["status"] == "ok"]
    columns = [c for c in [*TRAINING_COLUMNS, *[c for c in points if "memory" in c and c.endswith("_mb")]] if c in ok]
    summary = ok.groupby(keys)[columns].median().rename(columns=TRAINING_COLUMNS)
    failed = points[points["status"] != "ok"].groupby(keys)["failure_reason"].first().map(short_reason)
    return summary.join(failed.rename("failed"), how="outer").reset_index()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", help="experiment files whose results to print")
    parser.add_argument("--results", default=RESULTS, help="the results folder (default: results)")
    args = parser.parse_args(argv)
    found = tables(args.configs, Path(args.results))
    if not found:
        print(f"no points.csv of these experiments under {args.results}/", file=sys.stderr)
        return 1
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_colwidth", 60):
        if "pd14" in found:
            print("PD14 (medians over seeds; RTF = simulate / t_sim)\n")
            print(pd14_summary(found["pd14"]).to_string(index=False, float_format=lambda x: f"{x:.3g}"))
        if "snn-training" in found:
            print("\nsnn-training (medians over seeds)\n")
            print(training_summary(found["snn-training"]).to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
