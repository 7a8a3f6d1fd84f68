"""Figures of one experiment from its points table (seaborn / matplotlib, PNG and PDF).

Adding a figure means adding one function taking the points table and an Axes-free Figure,
and one entry in FIGURES; the workflow makes every entry for every experiment.
Invalid points (failed runs or implausible activity) are kept out of the curves and marked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from snnbench import pd14  # noqa: E402
from snnbench.simulators.base import PHASES  # noqa: E402
from snnbench.training import figures as training_figures  # noqa: E402

PALETTE = "colorblind"
WIDTH_IN = 3.5  # one journal column
INVALID = {"marker": "X", "color": "#d62728", "s": 40, "zorder": 5}


def _style() -> None:
    sns.set_theme(context="paper", style="ticks", palette=PALETTE, font_scale=1.0)


def _valid(points: pd.DataFrame) -> pd.DataFrame:
    return points[points["valid"]]


def _no_data(ax, text="no valid points") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)


def _mark_invalid(ax, points: pd.DataFrame, y: str) -> None:
    """Implausible runs at their value, failed runs on the x axis, both as red crosses."""
    bad = points[~points["valid"]]
    if bad.empty:
        return
    values = bad[y] if y in bad else pd.Series(np.nan, index=bad.index)
    floor = ax.get_ylim()[0]
    ys = values.fillna(floor)
    ax.scatter(bad["vps"], ys, label="invalid / failed", **INVALID)
    ax.legend(fontsize="small", frameon=False)


def phases(points: pd.DataFrame, fig) -> None:
    """Median wall time per phase (stacked), per number of virtual processes."""
    ax = fig.subplots()
    valid = _valid(points)
    if valid.empty:
        _no_data(ax)
        return
    cols = [f"time_{p}_s" for p in PHASES]
    medians = valid.groupby(["simulator", "vps"])[cols].median()
    medians.columns = list(PHASES)
    medians.index = [f"{s}\n{v}" if valid["simulator"].nunique() > 1 else str(v) for s, v in medians.index]
    medians.plot.bar(stacked=True, ax=ax, width=0.7, color=sns.color_palette(PALETTE, len(PHASES)), rot=0)
    ax.set_xlabel("virtual processes")
    ax.set_ylabel("wall time (s)")
    ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def real_time_factor(points: pd.DataFrame, fig) -> None:
    """Real-time factor of the simulate phase against VPs; error bars: range over seeds."""
    ax = fig.subplots()
    valid = _valid(points)
    if valid.empty:
        _no_data(ax)
    else:
        sns.lineplot(
            valid,
            x="vps",
            y="real_time_factor",
            hue="simulator",
            marker="o",
            errorbar=("pi", 100),
            err_style="bars",
            ax=ax,
        )
        ax.set_yscale("log")
    _mark_invalid(ax, points, "real_time_factor")
    ax.set_xlabel("virtual processes")
    ax.set_ylabel("real-time factor (wall / model time)")


def efficiency(points: pd.DataFrame, fig) -> None:
    """Parallel efficiency of the simulate phase against VPs; 1 is ideal scaling."""
    ax = fig.subplots()
    valid = _valid(points)
    if valid.empty:
        _no_data(ax)
    else:
        sns.lineplot(
            valid, x="vps", y="efficiency", hue="simulator", marker="o", errorbar=("pi", 100), err_style="bars", ax=ax
        )
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_ylim(0, max(1.2, float(valid["efficiency"].max()) * 1.1))
    ax.set_xlabel("virtual processes")
    ax.set_ylabel("parallel efficiency")


def memory(points: pd.DataFrame, fig) -> None:
    """Peak resident memory summed over ranks against VPs."""
    ax = fig.subplots()
    valid = _valid(points)
    if valid.empty:
        _no_data(ax)
    else:
        sns.lineplot(
            valid,
            x="vps",
            y="peak_rss_mb_sum",
            hue="simulator",
            marker="o",
            errorbar=("pi", 100),
            err_style="bars",
            ax=ax,
        )
        ax.set_ylim(bottom=0)
    _mark_invalid(ax, points, "peak_rss_mb_sum")
    ax.set_xlabel("virtual processes")
    ax.set_ylabel("peak memory, all ranks (MB)")


def rates(points: pd.DataFrame, fig) -> None:
    """Population rates of every finished point (dots; invalid ones red) and the published
    reference rates where they exist for the experiment's scale (black bars)."""
    ax = fig.subplots()
    cols = [f"rate_{p}_hz" for p in pd14.POPULATIONS]
    done = points[points["status"] == "ok"]
    if done.empty or not set(cols) <= set(done.columns):
        _no_data(ax, "no recorded rates")
        return
    # With several simulators in one experiment, one colour per simulator and shape.
    hue, title = "shape", "shape (n x r x t)"
    if done["simulator"].nunique() > 1:
        done = done.assign(run=done["simulator"] + " " + done["shape"])
        hue, title = "run", "simulator, shape (n x r x t)"
    long = done.melt(id_vars=[hue, "valid"], value_vars=cols, var_name="population", value_name="rate")
    long["population"] = long["population"].str.removeprefix("rate_").str.removesuffix("_hz")
    sns.stripplot(
        long[long["valid"]], x="population", y="rate", hue=hue, dodge=True, size=3, ax=ax, order=pd14.POPULATIONS
    )
    if (~long["valid"]).any():
        sns.stripplot(
            long[~long["valid"]],
            x="population",
            y="rate",
            color=INVALID["color"],
            marker="X",
            ax=ax,
            order=pd14.POPULATIONS,
        )
    first = done.iloc[0]
    reference = pd14.reference_rates(first["neuron_scale"], first["indegree_scale"], first["input"])
    if reference is not None:
        ref_rates, source = reference
        ax.scatter(
            range(len(pd14.POPULATIONS)),
            [ref_rates[p] for p in pd14.POPULATIONS],
            marker="_",
            s=200,
            color="black",
            label="reference",
            zorder=6,
        )
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    ax.legend(fontsize="small", frameon=False, title=title, title_fontsize="small")


def rates_by_simulator(points: pd.DataFrame, fig) -> None:
    """Population rates per simulator (mean over seeds and shapes, bars span the points): NEST
    and the Brian2 devices side by side; the title says whether each agrees with NEST."""
    from snnbench import compare

    ax = fig.subplots()
    cols = [f"rate_{p}_hz" for p in pd14.POPULATIONS]
    valid = _valid(points)
    if valid.empty or not set(cols) <= set(valid.columns):
        _no_data(ax, "no valid rates")
        return
    long = valid.melt(id_vars=["simulator"], value_vars=cols, var_name="population", value_name="rate")
    long["population"] = long["population"].str.removeprefix("rate_").str.removesuffix("_hz")
    sns.barplot(long, x="population", y="rate", hue="simulator", errorbar=("pi", 100), ax=ax, order=pd14.POPULATIONS)
    table = compare.agreement(points)
    if not table.empty:
        verdicts = table.dropna(subset=["agrees"]).groupby("simulator")["agrees"].all()
        words = [f"{s}: {'agrees' if ok else 'differs'}" for s, ok in verdicts.items()]
        if words:
            ax.set_title("rates vs NEST within seed spread: " + ", ".join(words), fontsize="small")
    ax.set_xlabel("population")
    ax.set_ylabel("rate (spikes/s)")
    ax.legend(fontsize="small", frameon=False)


@dataclass(frozen=True)
class Figure:
    draw: Callable
    caption: str
    height_in: float = 2.6


FIGURES = {
    "phases": Figure(phases, "Median wall time per phase against virtual processes."),
    "real_time_factor": Figure(
        real_time_factor,
        "Real-time factor of the measured simulation against virtual processes; bars span the seeds, "
        "red crosses are failed or implausible points.",
    ),
    "efficiency": Figure(
        efficiency,
        "Parallel efficiency of the simulate phase relative to the fewest virtual processes "
        "(strong: T0 v0 / (T v); weak: T0 / T).",
    ),
    "memory": Figure(memory, "Peak resident memory summed over ranks against virtual processes."),
    "rates": Figure(
        rates,
        "Population firing rates of every point, with the published reference rates (black) where they exist.",
    ),
    "rates_by_simulator": Figure(
        rates_by_simulator,
        "Population firing rates per simulator (NEST and Brian2's devices side by side, bars span the points); "
        "the title says whether each simulator's rates agree with NEST's within the seed-to-seed spread.",
    ),
}


# The snn-training family's figures live in snnbench.training.figures.
TRAINING_FIGURES = training_figures.FIGURES


def names_for(model: str) -> list[str]:
    """The figures an experiment of this model gets."""
    return list(TRAINING_FIGURES if model == "snn-training" else FIGURES)


def caption(name: str) -> str:
    return (TRAINING_FIGURES[name] if name in TRAINING_FIGURES else FIGURES[name]).caption


def draw(name: str, points: pd.DataFrame, png: str, pdf: str) -> None:
    if name in TRAINING_FIGURES:
        training_figures.draw(name, points, png, pdf)
        return
    _style()
    spec = FIGURES[name]
    wide = name in ("rates", "rates_by_simulator")
    fig = plt.figure(figsize=(WIDTH_IN * (2 if wide else 1), spec.height_in), layout="constrained")
    spec.draw(points, fig)
    experiment = points["experiment"].iloc[0] if not points.empty else ""
    fig.suptitle(experiment, fontsize="small")
    fig.savefig(png, dpi=200)
    fig.savefig(pdf)
    plt.close(fig)
