"""The panel registry and the figure: panels are functions `draw(ax, data)` registered with
`@panel(caption)`; a figure is a grid of named panels, lettered, saved as PNG and PDF."""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from snnbench.figures.style import DOUBLE_COLUMN_IN, FONT_PT, ROW_HEIGHT_IN, SINGLE_COLUMN_IN, style
from snnbench.network import validation


@dataclass
class PanelData:
    """What panels draw from: every point (failed and invalid included), the column naming the
    series (`simulator` or `table` for PD14, `framework` for snn-training) and, where a figure's
    panels need them, the statistics of recorded spikes."""

    points: pd.DataFrame
    series: str = "simulator"
    distributions: pd.DataFrame | None = None  # long: path, population, statistic, value, ...
    # The rows of a shared reference ensemble that judged these points (another experiment's table), for the
    # panels that show the reference beside them: `with_reference`.
    reference: pd.DataFrame | None = None

    @property
    def with_reference(self) -> pd.DataFrame:
        """The points, and the reference ensemble's rows where these points were judged against another table's."""
        if self.reference is None or self.reference.empty:
            return self.points
        extra = self.reference[~self.reference["path"].isin(self.points["path"])]
        if extra.empty:
            return self.points
        if "experiment" in self.points and self.points["experiment"].nunique() == 1:
            # compared as the experiment's own reference runs (rate agreement groups by experiment), as at collect
            extra = extra.assign(experiment=self.points["experiment"].iloc[0])
        return pd.concat([self.points, extra], ignore_index=True)

    @property
    def valid(self) -> pd.DataFrame:
        return self.points[self.points["valid"].astype(bool)]

    @property
    def invalid(self) -> pd.DataFrame:
        return self.points[~self.points["valid"].astype(bool)]


def by_machine(points: pd.DataFrame, series: str) -> tuple[pd.DataFrame, str]:
    """Points of several machines (tables concatenated): each series split by machine
    ('nest @ jureca:dc-cpu'), so that no curve mixes machines; one machine: unchanged."""
    if "machine" not in points or points["machine"].nunique() < 2:
        return points, series
    column = f"{series}_machine"
    return points.assign(**{column: points[series].astype(str) + " @ " + points["machine"].astype(str)}), column


# The version columns a family's rows carry, by the column naming its series (one source: the rows' own names).
VERSION_COLUMNS = ("simulator_version", "framework_version")


def provenance_line(points: pd.DataFrame, series: str = "simulator") -> str:
    """What a figure was measured with, for its title: each series' versions, the machines and the dates
    the points started (`nest 3.10.0 · machine host1 · 2026-11-28`); empty where the table says nothing."""
    parts = []
    column = next((c for c in VERSION_COLUMNS if c in points), None)
    if column and series in points:
        pairs = points[[series, column]].dropna().drop_duplicates().astype(str)
        parts.append(", ".join(f"{s} {v}" for s, v in sorted(pairs.itertuples(index=False))))
    if "machine" in points:
        parts.append("machine " + ", ".join(sorted(points["machine"].dropna().astype(str).unique())))
    if "started_utc" in points:
        days = sorted(points["started_utc"].dropna().astype(str).str[:10].unique())
        parts.append(days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}" if days else "")
    return " · ".join(p for p in parts if p)


@dataclass(frozen=True)
class Panel:
    draw: Callable
    caption: str
    needs_distributions: bool = False
    wide: bool = False  # alone in a figure, it takes the page width (many categories)


PANELS: dict[str, Panel] = {}  # every family's panels; names are unique across families


def panel(caption: str, needs_distributions: bool = False, wide: bool = False) -> Callable:
    """Register a panel under its function's name."""

    def register(draw: Callable) -> Callable:
        if draw.__name__ in PANELS and PANELS[draw.__name__].draw.__module__ != draw.__module__:
            raise ValueError(f"panel {draw.__name__!r} is registered twice")
        PANELS[draw.__name__] = Panel(draw, caption, needs_distributions, wide)
        return draw

    return register


def caption(panels: list[str]) -> str:
    """The panels' captions, lettered like the panels."""
    if len(panels) == 1:
        text = PANELS[panels[0]].caption
        return text[0].upper() + text[1:] + "."
    return " ".join(f"{string.ascii_uppercase[i]}: {PANELS[name].caption}." for i, name in enumerate(panels))


def layout(n: int, wide: bool = False) -> tuple[int, int, float]:
    """(rows, columns, width in inches): one panel in one journal column (a wide one over the
    page), more over the page."""
    if n == 1:
        return 1, 1, DOUBLE_COLUMN_IN if wide else SINGLE_COLUMN_IN
    cols = 2 if n in (2, 4) else 3
    return math.ceil(n / cols), cols, DOUBLE_COLUMN_IN


def draw(
    panels: list[str], data: PanelData, png: str | None = None, pdf: str | None = None, title: str = "", note: str = ""
):
    """Draw the named panels on one figure and save it; returns the Figure (closed after saving). `note`: a
    second title line, e.g. provenance_line's."""
    unknown = [p for p in panels if p not in PANELS]
    if unknown:
        raise ValueError(f"unknown panels {unknown}; known: {', '.join(PANELS)}")
    style()
    rows, cols, width = layout(len(panels), wide=len(panels) == 1 and PANELS[panels[0]].wide)
    fig = plt.figure(figsize=(width, ROW_HEIGHT_IN * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for i, (ax, name) in enumerate(zip(axes, panels, strict=False)):
        PANELS[name].draw(ax, data)
        if len(panels) > 1:
            ax.set_title(string.ascii_uppercase[i], loc="left", fontweight="bold")
    for ax in axes[len(panels) :]:
        ax.remove()
    if title or note:
        fig.suptitle("\n".join(t for t in (title, note) if t), fontsize=FONT_PT)
    if png:
        fig.savefig(png)
    if pdf:
        fig.savefig(pdf)
    plt.close(fig)
    return fig


def needs_distributions(panels: list[str]) -> bool:
    return any(PANELS[p].needs_distributions for p in panels if p in PANELS)


def load_distributions(
    stats_paths: list, points: pd.DataFrame, series: str = "simulator", max_values: int = 200
) -> pd.DataFrame:
    """The samples of the given stats.npz files as one long table, with each point's series,
    shape and validity from `points` (matched by the point's path). A sample larger than
    `max_values` is thinned to a random subset of that size (fixed seed): box plots of the
    quartiles look the same and draw in a fraction of the time."""
    rng = np.random.default_rng(0)
    keyed = points.set_index("path")
    values, meta_rows, counts = [], [], []
    for path in stats_paths:
        stats, meta = validation.load(path)
        if meta["reason"] or meta["point"] not in keyed.index:
            continue
        row = keyed.loc[meta["point"]]
        for pop, samples in stats.items():
            for stat in validation.STATISTICS:
                sample = samples[stat]
                if sample.size > max_values:
                    sample = rng.choice(sample, max_values, replace=False)
                values.append(sample)
                counts.append(sample.size)
                meta_rows.append((meta["point"], row[series], row["shape"], bool(row["valid"]), pop, stat))
    if not values:
        return pd.DataFrame()
    columns = ["path", series, "shape", "valid", "population", "statistic"]
    frame = pd.DataFrame(meta_rows, columns=columns).loc[np.repeat(np.arange(len(meta_rows)), counts)]
    return frame.reset_index(drop=True).assign(value=np.concatenate(values))
