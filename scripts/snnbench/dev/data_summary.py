"""Print an snn-data table as the study's table: per model and strategy the medians over seeds of
a later epoch by part, the first epoch, the speed-up over naive and the caches' footprint.

    python -m snnbench.dev.data_summary results/<experiment>/points.csv
"""

from __future__ import annotations

import sys

import pandas as pd

from snnbench.figures.snn_data import CONFIG_KEYS, speedups

COLUMNS = {
    "later_load_s": "load s",
    "later_copy_s": "copy s",
    "later_step_s": "step s",
    "later_total_s": "epoch s",
    "first_total_s": "1st epoch s",
    "samples_per_s": "samples/s",
    "cache_disk_mb": "disk MB",
    "cache_memory_mb": "memory MB",
    "peak_rss_mb": "peak RSS MB",
}


def summary(points: pd.DataFrame) -> pd.DataFrame:
    keys = [k for k in CONFIG_KEYS if k in points and points[k].nunique() > 1] or ["framework"]
    keys = list(dict.fromkeys(["framework", *keys]))
    valid = points[points["valid"].astype(bool)]
    table = valid.groupby([*keys, "strategy"], dropna=False)[list(COLUMNS)].median()
    table["seeds"] = valid.groupby([*keys, "strategy"], dropna=False)["seed"].nunique()
    table["bound"] = valid.groupby([*keys, "strategy"], dropna=False)["bound"].agg(lambda b: b.mode().iat[0])
    gains = speedups(points).set_index([*keys, "strategy"])["speedup"] if not valid.empty else None
    table["speed-up"] = gains.reindex(table.index) if gains is not None else None
    return table.rename(columns=COLUMNS)


def main(argv: list[str]) -> None:
    points = pd.read_csv(argv[0])
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.precision", 3):
        print(summary(points).to_string())
    skipped = points[points["status"] != "ok"]
    for _, row in skipped.iterrows():
        print(f"{row['status']}: {row['path']}: {row['failure_reason']}")


if __name__ == "__main__":
    main(sys.argv[1:])
