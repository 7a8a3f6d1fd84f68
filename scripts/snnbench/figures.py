"""Publication figures from points tables (seaborn / matplotlib, PNG and PDF, one style).

A figure is a grid of panels named in the config (`figures.experiment` for the figures of every
experiment, `figures.comparisons` for figures across result tables). A panel is one function
`draw(ax, data)` registered with `@panel(caption)`; adding a panel means writing that function.

Every panel works for any simulator: the series of a panel are the values of `data.series`
(`simulator` within an experiment, `table` across result tables). Median over seeds, error bars
span the seeds (min to max). Failed points and invalid ones (implausible activity, or statistics
outside the validation tolerance) are kept out of the curves and drawn as red crosses: failed
ones on the x axis, invalid ones at their value.
"""

from __future__ import annotations

import math
import string
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from snnbench import pd14, validation  # noqa: E402
from snnbench.simulators.base import PHASES  # noqa: E402

PALETTE = "colorblind"  # Okabe-Ito-like, safe for the common colour-vision deficiencies
MM = 1 / 25.4
SINGLE_COLUMN_IN = 89 * MM  # Nature / Cell Press / eLife single column
DOUBLE_COLUMN_IN = 183 * MM  # full page width
ROW_HEIGHT_IN = 2.1
FONT_PT = 7  # journals ask for 5-8 pt at print size
INVALID = {"marker": "X", "color": "#d62728", "s": 30, "zorder": 5, "linewidths": 0}
ERRORBAR = ("pi", 100)  # bars span all seeds
MAX_DOTS = 40  # up to this many points a panel shows every point, beyond it their spread
CONSTRUCTION = ("setup", "create", "connect", "prepare")
PROPAGATION = ("presimulate", "simulate")
# The simulator's detailed timers of the simulate phase, in plotting order: for NEST those of a
# build with detailed timers (-Dwith-detailed-timers=ON), as in beNNch's figures. Simulators not
# named here show every `timer_simulate_*` column their records have.
NEST_DETAILED_TIMERS = {
    "update": "time_update",
    "collocate": "time_collocate_spike_data",
    "communicate": "time_communicate_spike_data",
    "deliver": "time_deliver_spike_data",
}
DETAILED_TIMERS = {"nest": NEST_DETAILED_TIMERS, "pynn-nest": NEST_DETAILED_TIMERS}
TOTAL_TIMERS = ("time_simulate",)  # timers that hold the whole phase, not a part of it


@dataclass
class Data:
    """What panels draw from: every point (failed and invalid included) and, where a figure's
    panels need them, the statistics of recorded spikes."""

    points: pd.DataFrame
    series: str = "simulator"
    distributions: pd.DataFrame | None = None  # long: path, population, statistic, value, ...

    @property
    def valid(self) -> pd.DataFrame:
        return self.points[self.points["valid"].astype(bool)]

    @property
    def invalid(self) -> pd.DataFrame:
        return self.points[~self.points["valid"].astype(bool)]


@dataclass(frozen=True)
class Panel:
    draw: Callable
    caption: str
    needs_distributions: bool = False
    wide: bool = False  # alone in a figure, it takes the page width (many categories)


PANELS: dict[str, Panel] = {}


def panel(caption: str, needs_distributions: bool = False, wide: bool = False) -> Callable:
    """Register a panel under its function's name."""

    def register(draw: Callable) -> Callable:
        PANELS[draw.__name__] = Panel(draw, caption, needs_distributions, wide)
        return draw

    return register


def style() -> None:
    sns.set_theme(context="paper", style="ticks", palette=PALETTE, font="DejaVu Sans")
    plt.rcParams.update(
        {
            "font.size": FONT_PT,
            "axes.titlesize": FONT_PT,
            "axes.labelsize": FONT_PT,
            "xtick.labelsize": FONT_PT - 1,
            "ytick.labelsize": FONT_PT - 1,
            "legend.fontsize": FONT_PT - 1,
            "legend.title_fontsize": FONT_PT - 1,
            "legend.frameon": False,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "lines.linewidth": 1.0,
            "lines.markersize": 3.5,
            "errorbar.capsize": 2,
            "pdf.fonttype": 42,  # TrueType in PDFs: text stays editable
            "savefig.dpi": 300,
        }
    )


# Helpers shared by panels ---------------------------------------------------------------------


def _colors(values) -> dict:
    values = list(dict.fromkeys(values))
    return dict(zip(values, sns.color_palette(PALETTE, max(len(values), 1)), strict=False))


def _no_data(ax, text: str = "no valid points") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def _shared_vps(points: pd.DataFrame, series: str) -> bool:
    """Whether several shapes of one series have the same number of VPs (e.g. 2 nodes x 1 thread
    and 1 node x 2 threads): then they are told apart, never pooled as if they were seeds."""
    return bool((points.groupby([series, "vps"])["shape"].nunique() > 1).any())


def _crowded(ax, n: int, most: int = 16) -> None:
    """Upright tick labels up to 8 categories, rotated beyond, every k-th beyond `most`."""
    if n > 8:
        ax.tick_params(axis="x", labelrotation=90)
    if n > most:
        step = -(-n // most)
        for i, label in enumerate(ax.get_xticklabels()):
            label.set_visible(i % step == 0)


def _vps_axis(ax, points: pd.DataFrame) -> None:
    """x = virtual processes; log2 over wide ranges; weak scaling also names the model size."""
    vps = sorted(points["vps"].dropna().unique())
    if not vps:
        return
    if vps[-1] / vps[0] >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(vps)
    if (points["scaling"] == "weak").any():
        scale = points.groupby("vps")["neuron_scale"].first()
        ax.set_xticklabels([f"{v:g}\nN={scale[v]:g}" for v in vps])
    else:
        ax.set_xticklabels([f"{v:g}" for v in vps])
    _crowded(ax, len(vps))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel("virtual processes")


def _lines(ax, data: Data, y: str, label: str, log: bool = False) -> bool:
    """Median over seeds per series against VPs, error bars over seeds, invalid points marked.
    Shapes sharing a VP count get their own line per layout of a node (ranks x threads)."""
    valid = data.valid.dropna(subset=[y]) if y in data.points else data.valid.iloc[0:0]
    if not valid.empty:
        style = None
        if _shared_vps(data.points, data.series):
            valid = valid.assign(
                **{"per node": valid["ranks_per_node"].astype(str) + "x" + valid["threads_per_rank"].astype(str)}
            )
            style = "per node"
        sns.lineplot(
            valid,
            x="vps",
            y=y,
            hue=data.series,
            style=style,
            palette=_colors(data.points[data.series]),
            estimator="median",
            markers=True if style else None,
            marker=None if style else "o",
            dashes=False,
            errorbar=ERRORBAR,
            err_style="bars",
            ax=ax,
        )
        if log:
            _log_y(ax)
    _vps_axis(ax, data.points)
    _mark_invalid(ax, data, y)
    ax.set_ylabel(label)
    _legend(ax)
    return not valid.empty


def _mark_invalid(ax, data: Data, y: str | None) -> None:
    """Invalid finished points at their value, failed points on the x axis: red crosses."""
    bad = data.invalid
    if bad.empty:
        return
    values = bad[y] if y and y in bad else pd.Series(np.nan, index=bad.index)
    bottom = ax.get_ylim()[0]
    ax.scatter(bad["vps"], values.fillna(bottom), label="failed / invalid", clip_on=False, **INVALID)


def _log_y(ax) -> None:
    """Log y axis with plain numbers (1, 2, 5, 10), minor ones labelled over narrow ranges."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.LogFormatter())
    ax.yaxis.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(1.5, 0.5)))


def _legend(ax, **kwargs) -> None:
    """A legend inside the panel; beside it (in columns) when it has many entries."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) > 5 and "loc" not in kwargs:
        kwargs.update(loc="upper left", bbox_to_anchor=(1.0, 1.0), ncols=1 + len(handles) // 12)
    ax.legend(handles, labels, **kwargs)


def _lighter(color, j: int):
    """The j-th series' shade of a colour: the first as is, later ones mixed with white."""
    mix = min(0.25 * j, 0.75)
    return tuple(c + (1 - c) * mix for c in matplotlib.colors.to_rgb(color))


def _stacked_bars(
    ax, data: Data, parts: dict[str, pd.Series], ylabel: str, legend_title: str | None = None, errorbars: bool = True
) -> None:
    """Bars per shape (ordered by VPs; dodged per series, later series in lighter shades) stacked from
    `parts` (label -> per-point values), medians over seeds; an error bar over seeds on the
    stack's total."""
    valid = data.valid
    shapes = data.points.sort_values(["vps", "nodes", "ranks_per_node"], kind="stable")
    shapes = shapes.drop_duplicates("shape")[["shape", "vps", "neuron_scale"]].reset_index(drop=True)
    position = {shape: i for i, shape in enumerate(shapes["shape"])}
    series = list(dict.fromkeys(data.points[data.series]))
    width = 0.8 / len(series)
    colors = dict(zip(parts, sns.color_palette(PALETTE, len(parts)), strict=False))
    frame = valid[["shape", data.series]].copy()
    for label, values in parts.items():
        frame[label] = values.loc[valid.index]
    frame["__total"] = frame[list(parts)].sum(axis=1)
    for j, name in enumerate(series):
        sub = frame[frame[data.series] == name]
        if sub.empty:
            continue
        med = sub.groupby("shape").median(numeric_only=True)
        spread = sub.groupby("shape")["__total"].agg(["min", "max"])
        x = np.array([position[s] for s in med.index]) - 0.4 + width * (j + 0.5)
        bottom = np.zeros(len(med))
        for label in parts:
            ax.bar(
                x,
                med[label],
                width * 0.9,
                bottom=bottom,
                color=_lighter(colors[label], j),
                linewidth=0,  # seaborn's white edges would hide narrow bars
                label=label if j == 0 else None,
            )
            bottom += med[label].to_numpy()
        total = med["__total"].to_numpy()
        if errorbars:
            ax.errorbar(x, total, yerr=[total - spread["min"], spread["max"] - total], fmt="none", color="k", lw=0.8)
        if len(series) > 1:
            ax.bar([np.nan], [np.nan], color=_lighter("0.35", j), label=f"{name} (shade)")
    bad = data.invalid
    if not bad.empty:
        ax.scatter([position[s] for s in bad["shape"]], np.zeros(len(bad)), label="failed / invalid", **INVALID)
    ax.set_xticks(range(len(shapes)))
    labels = [f"{v:g}" for v in shapes["vps"]]
    if _shared_vps(data.points, data.series):
        labels = [f"{v:g} ({s})" for v, s in zip(shapes["vps"], shapes["shape"], strict=True)]
    if (data.points["scaling"] == "weak").any():
        labels = [f"{label}\nN={n:g}" for label, n in zip(labels, shapes["neuron_scale"], strict=True)]
    ax.set_xticklabels(labels)
    _crowded(ax, len(shapes))
    ax.set_xlabel("virtual processes" + (" (nodes x ranks x threads)" if _shared_vps(data.points, data.series) else ""))
    ax.set_ylabel(ylabel)
    _legend(ax, loc="upper left", bbox_to_anchor=(1.0, 1.0), title=legend_title, alignment="left")


def _phase_columns(points: pd.DataFrame, phases) -> list[str]:
    return [f"time_{p}_s" for p in phases if f"time_{p}_s" in points]


# Panels ---------------------------------------------------------------------------------------


@panel("network construction (setup to prepare) and state propagation (presimulation and simulation), stacked")
def construction_propagation(ax, data: Data) -> None:
    if data.valid.empty or "time_simulate_s" not in data.points:
        _no_data(ax)
        return
    points = data.points
    parts = {
        "construction": points[_phase_columns(points, CONSTRUCTION)].sum(axis=1),
        "propagation": points[_phase_columns(points, PROPAGATION)].sum(axis=1),
    }
    _stacked_bars(ax, data, parts, "wall time (s)")


@panel("wall time per simulator-neutral phase, stacked")
def phases(ax, data: Data) -> None:
    if data.valid.empty or "time_simulate_s" not in data.points:
        _no_data(ax)
        return
    parts = {p: data.points[f"time_{p}_s"] for p in PHASES if f"time_{p}_s" in data.points}
    _stacked_bars(ax, data, parts, "wall time (s)")


def detailed_timer_columns(points: pd.DataFrame) -> dict[str, str]:
    """Detailed timers of the simulate phase present in the table: label -> column."""
    columns = {}
    for simulator in points["simulator"].dropna().unique():
        named = DETAILED_TIMERS.get(simulator)
        if named is not None:
            for label, timer in named.items():
                if f"timer_simulate_{timer}_s" in points:
                    columns[label] = f"timer_simulate_{timer}_s"
    if not columns and not any(s in DETAILED_TIMERS for s in points["simulator"].dropna().unique()):
        prefix = "timer_simulate_"
        for col in points.columns:
            name = col.removeprefix(prefix).removesuffix("_s")
            if col.startswith(prefix) and not name.endswith("_cpu") and name not in TOTAL_TIMERS:
                columns[name.removeprefix("time_")] = col
    return columns


@panel(
    "real-time factor of the simulate phase split into the simulator's own detailed phases (for NEST: update, "
    "collocate, communicate, deliver; 'other' is the rest) where the build records them"
)
def real_time_factor_phases(ax, data: Data) -> None:
    points = data.points
    if data.valid.empty or "real_time_factor" not in points:
        _no_data(ax)
        return
    model_s = points["t_sim_ms"] * 1e-3
    detailed = detailed_timer_columns(points)
    parts = {label: points[col].fillna(0.0) / model_s for label, col in detailed.items()}
    title = None
    if parts:
        parts["other"] = (points["real_time_factor"] - sum(parts.values())).clip(lower=0.0)
    else:
        parts["simulate"] = points["real_time_factor"]
        title = "no detailed\ntimers recorded"
    _stacked_bars(ax, data, parts, "real-time factor", legend_title=title)


@panel("real-time factor of the simulate phase (wall time / model time; 1 = real time)")
def real_time_factor(ax, data: Data) -> None:
    if not _lines(ax, data, "real_time_factor", "real-time factor", log=True):
        _no_data(ax)


@panel("share of each phase in the total wall time (medians over seeds)")
def phase_fractions(ax, data: Data) -> None:
    cols = _phase_columns(data.points, PHASES)
    if data.valid.empty or not cols:
        _no_data(ax)
        return
    totals = data.points[cols].sum(axis=1)
    parts = {c.removeprefix("time_").removesuffix("_s"): data.points[c] / totals for c in cols}
    _stacked_bars(ax, data, parts, "fraction of wall time", errorbars=False)  # totals are 1
    ax.set_ylim(0, 1.05)


@panel("parallel efficiency of the simulate phase against the fewest VPs (strong: T0 v0 / (T v); weak: T0 / T)")
def efficiency(ax, data: Data) -> None:
    if not _lines(ax, data, "efficiency", "parallel efficiency"):
        _no_data(ax)
        return
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    top = float(np.nanmax(data.valid["efficiency"])) if data.valid["efficiency"].notna().any() else 1.0
    ax.set_ylim(0, max(1.2, top * 1.1))


@panel("wall time of the simulate phase and of all phases")
def time_to_solution(ax, data: Data) -> None:
    if data.valid.empty or "time_simulate_s" not in data.points:
        _no_data(ax)
        return
    long = data.valid.melt(
        id_vars=["vps", data.series],
        value_vars=[c for c in ("time_simulate_s", "time_total_s") if c in data.points],
        var_name="phase",
        value_name="time",
    )
    long["phase"] = long["phase"].map({"time_simulate_s": "simulate", "time_total_s": "all phases"})
    sns.lineplot(
        long,
        x="vps",
        y="time",
        hue=data.series,
        style="phase",
        palette=_colors(data.points[data.series]),
        estimator="median",
        marker="o",
        errorbar=ERRORBAR,
        err_style="bars",
        ax=ax,
    )
    _vps_axis(ax, data.points)
    _mark_invalid(ax, data, "time_total_s")
    ax.set_ylabel("wall time (s)")
    ax.set_ylim(bottom=0)
    _legend(ax)


@panel("peak resident memory per node (VmHWM summed over the node's ranks)")
def memory_per_node(ax, data: Data) -> None:
    points = data.points
    if "peak_rss_mb_sum" in points:
        data = Data(points.assign(memory_per_node_gb=points["peak_rss_mb_sum"] / points["nodes"] / 1024), data.series)
    if not _lines(ax, data, "memory_per_node_gb", "peak memory per node (GB)"):
        _no_data(ax)
        return
    ax.set_ylim(0, float(data.valid["memory_per_node_gb"].max()) * 1.15)


@panel("real-time factor of the same point (model size, resources) on each series, median over seeds", wide=True)
def simulator_comparison(ax, data: Data) -> None:
    points = data.points
    if data.valid.empty or "real_time_factor" not in points:
        _no_data(ax)
        return
    many = points["shape"].nunique() * points["neuron_scale"].nunique() > 12
    sep = " " if many else "\n"
    frame = points.assign(point=points["shape"] + sep + "N=" + points["neuron_scale"].map("{:g}".format))
    order = list(dict.fromkeys(frame.sort_values(["vps", "neuron_scale"])["point"]))
    valid = frame[frame["valid"].astype(bool)]
    sns.barplot(
        valid,
        x="point",
        y="real_time_factor",
        hue=data.series,
        order=order,
        palette=_colors(points[data.series]),
        estimator="median",
        errorbar=ERRORBAR,
        err_kws={"linewidth": 0.8},
        capsize=0.1,
        ax=ax,
    )
    bad = frame[~frame["valid"].astype(bool)]
    if not bad.empty:
        ax.scatter([order.index(p) for p in bad["point"]], np.zeros(len(bad)), label="failed / invalid", **INVALID)
    values = valid["real_time_factor"]
    if values.max() / values.min() > 20:  # simulators a hundredfold apart: log, bars from a visible floor
        _log_y(ax)
        ax.set_ylim(bottom=values.min() / 3)
    if len(order) > 6:
        ax.tick_params(axis="x", labelrotation=90)
    ax.set_xlabel("point (nodes x ranks x threads, neuron scale)")
    ax.set_ylabel("real-time factor")
    _legend(ax)


def _rates_long(points: pd.DataFrame, keep: list[str]) -> pd.DataFrame | None:
    """One row per point and population (columns `keep`, population, rate); None without rates."""
    cols = [f"rate_{p}_hz" for p in pd14.POPULATIONS]
    if points.empty or not set(cols) <= set(points.columns):
        return None
    long = points.melt(id_vars=keep, value_vars=cols, var_name="population", value_name="rate")
    long["population"] = long["population"].str.removeprefix("rate_").str.removesuffix("_hz")
    return long


@panel(
    "population rates of every finished point (invalid ones red; the spread as boxes beyond 40 points) and the "
    "published reference rates (black)",
    wide=True,
)
def rates(ax, data: Data) -> None:
    done = data.points[data.points["status"] == "ok"]
    hue = data.series if done[data.series].nunique() > 1 else "shape"
    long = _rates_long(done, [hue, "valid"])
    if long is None:
        _no_data(ax, "no recorded rates")
        return
    good, bad = long[long["valid"].astype(bool)], long[~long["valid"].astype(bool)]
    order = list(pd14.POPULATIONS)
    if len(done) <= MAX_DOTS:
        if not good.empty:
            sns.stripplot(good, x="population", y="rate", hue=hue, dodge=True, size=2.5, ax=ax, order=order)
        if not bad.empty:
            sns.stripplot(bad, x="population", y="rate", color=INVALID["color"], marker="X", ax=ax, order=order)
    else:  # many points: their spread per population as boxes, invalid ones as their medians
        if not good.empty:
            sns.boxplot(good, x="population", y="rate", hue=hue, order=order, fliersize=0, linewidth=0.6, ax=ax)
        if not bad.empty:
            med = bad.groupby("population")["rate"].median().reindex(order)
            ax.scatter(range(len(order)), med, label="invalid (median)", **INVALID)
    first = done.iloc[0]
    reference = pd14.reference_rates(first["neuron_scale"], first["indegree_scale"], first["input"])
    if reference is not None:
        ref_rates, _ = reference
        ax.scatter(
            range(len(pd14.POPULATIONS)),
            [ref_rates[p] for p in pd14.POPULATIONS],
            marker="_",
            s=120,
            color="black",
            label="reference",
            zorder=6,
        )
    ax.set_ylim(bottom=0)
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    _legend(ax, title=hue)


@panel(
    "population rates per simulator (mean over seeds and shapes; bars span the points); the title says whether each "
    "simulator's rates agree with NEST's within the seed-to-seed spread",
    wide=True,
)
def rates_by_simulator(ax, data: Data) -> None:
    from snnbench import compare

    long = _rates_long(data.valid, [data.series])
    if long is None:
        _no_data(ax, "no valid rates")
        return
    sns.barplot(
        long,
        x="population",
        y="rate",
        hue=data.series,
        palette=_colors(data.points[data.series]),
        errorbar=ERRORBAR,
        err_kws={"linewidth": 0.8},
        order=list(pd14.POPULATIONS),
        ax=ax,
    )
    table = compare.agreement(data.points)
    if not table.empty:
        verdicts = table.dropna(subset=["agrees"]).groupby("simulator")["agrees"].all()
        words = [f"{s}: {'agrees' if ok else 'differs'}" for s, ok in verdicts.items()]
        if words:
            ax.set_title("rates vs NEST within the seed spread: " + ", ".join(words), loc="right")
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    _legend(ax, title=data.series)


def _distribution(ax, data: Data, statistic: str, label: str) -> None:
    dist = data.distributions
    if dist is None or dist.empty or not (dist["statistic"] == statistic).any():
        _no_data(ax, "no spike statistics")
        return
    sub = dist[dist["statistic"] == statistic]
    hue = data.series if sub[data.series].nunique() > 1 else "shape"
    order = [v for v in dict.fromkeys(data.points.sort_values("vps", kind="stable")[hue]) if v in set(sub[hue])]
    sns.boxplot(
        sub[sub["valid"].astype(bool)],
        x="population",
        y="value",
        hue=hue,
        hue_order=order,
        order=list(pd14.POPULATIONS),
        palette=_colors(order),
        fliersize=0,
        whis=(5, 95),
        linewidth=0.6,
        ax=ax,
    )
    invalid = sub[~sub["valid"].astype(bool)]
    if not invalid.empty:
        med = invalid.groupby("population")["value"].median().reindex(list(pd14.POPULATIONS))
        ax.scatter(range(len(med)), med, label="invalid (median)", **INVALID)
    ax.set_xlabel("population")
    ax.set_ylabel(label)
    _legend(ax, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=4, title=hue, alignment="right")


@panel(
    "per-neuron firing rates of the neuron subsample per population (boxes: quartiles, whiskers: 5-95 %)",
    needs_distributions=True,
)
def rate_distribution(ax, data: Data) -> None:
    _distribution(ax, data, "rate", "rate (spikes/s)")


@panel("ISI coefficients of variation per population (neurons with enough spikes)", needs_distributions=True)
def cv_isi_distribution(ax, data: Data) -> None:
    _distribution(ax, data, "cv_isi", "ISI CV")


@panel("pairwise spike-count correlation coefficients per population (2 ms bins)", needs_distributions=True)
def correlation_distribution(ax, data: Data) -> None:
    _distribution(ax, data, "correlation", "correlation coefficient")
    if data.distributions is not None and not data.distributions.empty:
        ax.axhline(0.0, color="grey", lw=0.6, ls=":")


@panel(
    "Kolmogorov-Smirnov distance of each point's statistics to its reference run, relative to the tolerance "
    "(above 1 = outside: the point is invalid)"
)
def validation_distances(ax, data: Data) -> None:
    points = data.points
    if "validation_excess_rate" not in points or not points["validation_checked"].astype(bool).any():
        _no_data(ax, "no validation results")
        return
    long = points[points["validation_checked"].astype(bool)].melt(
        id_vars=["vps", "valid"],
        value_vars=[f"validation_excess_{s}" for s in validation.STATISTICS],
        var_name="statistic",
        value_name="excess",
    )
    long["statistic"] = long["statistic"].str.removeprefix("validation_excess_")
    long = long.dropna(subset=["excess"])
    order = list(validation.STATISTICS)
    rng = np.random.default_rng(0)  # horizontal jitter only
    x = long["statistic"].map(order.index) + rng.uniform(-0.2, 0.2, len(long))
    within = long["excess"] <= 1.0
    dense = len(long) > 3 * MAX_DOTS  # thousands of markers: raster them in the PDF (small, fast files)
    ax.scatter(
        x[within], long["excess"][within], s=10, color="0.3", label="within tolerance", clip_on=False, rasterized=dense
    )
    if (~within).any():
        ax.scatter(x[~within], long["excess"][~within], label="outside: invalid", clip_on=False, **INVALID)
    ax.axhline(1.0, color=INVALID["color"], lw=0.8, ls="--")
    ax.set_xticks(range(len(order)), [s.replace("_", " ") for s in order])
    ax.set_xlim(-0.5, len(order) - 0.5)
    ax.set_ylim(bottom=0, top=max(1.2, float(long["excess"].max()) * 1.1 if len(long) else 1.2))
    ax.set_xlabel("statistic (worst population of each point)")
    ax.set_ylabel("KS to reference / allowed")
    _legend(ax)


# Figures --------------------------------------------------------------------------------------


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


def draw(panels: list[str], data: Data, png: str | None = None, pdf: str | None = None, title: str = ""):
    """Draw the named panels on one figure and save it; returns the Figure (closed after saving)."""
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
    if title:
        fig.suptitle(title, fontsize=FONT_PT)
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
