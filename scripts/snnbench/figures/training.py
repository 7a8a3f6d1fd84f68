"""snn-training panels (series: `framework`, the library) and the family's figures.

- training_time: forward, backward and step time against n per library (log axes; bars: IQR)
  with the FLOP lower bound, the warm-up / compile time, and the points that did not run.
- training_spike_rate: each library's spike rate beside the target the gain was calibrated to.
- training_memory: peak resident memory (CPU points) and CUDA peak allocated memory (GPU points).
- training_time_loop: backward time with x[t] against unbind for loops snnbench writes.
- training_published_2023: Open Neuromorphic's 2023 published times, a separate reference
  series (another machine, another method), against the FLOP bound of their GPU.
Points that failed the sanity check are red crosses, never part of a curve.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from snnbench.figures.axes import legend, no_data
from snnbench.figures.registry import PanelData, panel
from snnbench.figures.style import INVALID, colors, lighter
from snnbench.training import sanity

PASSES = ("forward", "backward", "step")
REFERENCE_2023 = Path(sanity.__file__).with_name("reference_2023.csv")
REFERENCE_2023_GPU = "RTX 2070"
REFERENCE_2023_SETUP = {"T": 500, "batch": 10}
NOT_RUN_SHOWN = 12  # reasons listed at most

# The family's figures: name -> panels (results/{experiment}/figures/{name}.png and .pdf).


def read_reference_2023() -> pd.DataFrame:
    """The published 2023 times (see the header of reference_2023.csv for the source)."""
    return pd.read_csv(REFERENCE_2023, comment="#")


def _label(points: pd.DataFrame, series: str = "framework") -> pd.Series:
    """Library, with the loop form where snnbench writes the loop and it is not the default."""
    label = points[series].astype(str)
    indexed = points.get("loop", pd.Series("", index=points.index)) == "index"
    label[indexed] = label[indexed] + " (x[t])"
    device = points["device"].astype(str)
    if device.nunique() > 1:
        label = label + " / " + device
    strategy = points.get("strategy_id", pd.Series("vanilla", index=points.index)).fillna("vanilla").astype(str)
    other = strategy != "vanilla"  # memory strategies: a series of their own
    label[other] = label[other] + " [" + strategy[other] + "]"
    return label


def _finished(data: PanelData) -> pd.DataFrame:
    """The points that ran, each with its label."""
    done = data.points[data.points["status"] == "ok"].copy()
    if not done.empty:
        done["label"] = _label(done, data.series)
    return done


def not_run_lines(points: pd.DataFrame, width: int = 110, series: str = "framework") -> list[str]:
    """One line per distinct reason a point did not run (skipped or failed)."""
    bad = points[points["status"] != "ok"]
    lines = []
    for (status, reason), group in bad.groupby(["status", "failure_reason"]):
        first = str(reason).splitlines()[0] if isinstance(reason, str) and reason else "unknown"
        who = ", ".join(sorted(set(_label(group, series))))
        lines.append(textwrap.shorten(f"{status}: {who}: {first}", width=width, placeholder=" ..."))
    return lines


def _log_log(ax) -> None:
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (neurons)")


def _pass_time(ax, data: PanelData, name: str) -> None:
    """Median over seeds of one pass's median time against n per library, IQR bars, the FLOP bound."""
    done = _finished(data)
    valid = done[done["valid"].astype(bool)] if not done.empty else done
    ax.set_title(name)
    ax.set_xlabel("n (neurons)")
    ax.set_ylabel("time per pass (s)")
    if valid.empty:
        no_data(ax, "no finished points")
        return
    column, q1, q3 = f"{name}_median_s", f"{name}_q1_s", f"{name}_q3_s"
    med = valid.groupby(["label", "n"], as_index=False)[[column, q1, q3]].median()
    palette = colors(sorted(med["label"].unique()))
    for label, group in med.groupby("label"):
        yerr = [group[column] - group[q1], group[q3] - group[column]]
        ax.errorbar(group["n"], group[column], yerr=yerr, marker="o", ms=3, color=palette[label])
        ax.plot([], [], marker="o", color=palette[label], label=label)  # libraries first in the legend
    bound = valid.groupby("n")["min_forward_s"].min() * (2 if name == "step" else 1)
    ax.plot(bound.index, bound.values, ls="--", marker="_", ms=12, color="black", lw=0.8, label="FLOP bound")
    bad = done[~done["valid"].astype(bool)]
    if not bad.empty:
        ax.scatter(bad["n"], bad[column], label="fails sanity check", **INVALID)
    _log_log(ax)
    legend(ax, loc="upper left")


@panel("median forward time against layer width per library (bars: IQR over repetitions; dashed: FLOP lower bound)")
def training_forward_time(ax, data: PanelData) -> None:
    _pass_time(ax, data, "forward")


@panel("median backward time against layer width per library (bars: IQR over repetitions; dashed: FLOP lower bound)")
def training_backward_time(ax, data: PanelData) -> None:
    _pass_time(ax, data, "backward")


@panel("median training-step time against layer width per library (bars: IQR; dashed: twice the forward bound)")
def training_step_time(ax, data: PanelData) -> None:
    _pass_time(ax, data, "step")


@panel("warm-up (compile / first-call) time beyond a settled step per library, median over points")
def training_warmup(ax, data: PanelData) -> None:
    done = _finished(data)
    ax.set_title("warm-up beyond a settled step")
    if done.empty:
        no_data(ax, "no finished points")
        return
    compile_s = done.groupby("label")["compile_s"].median().sort_values()
    ax.barh(compile_s.index, compile_s.values.clip(min=1e-4), color="grey")
    ax.set_xscale("log")
    ax.set_xlabel("compile / first-call time (s)")
    ax.tick_params(axis="y", labelsize="x-small")


@panel("points that did not run (skipped or failed), one line per reason")
def training_not_run(ax, data: PanelData) -> None:
    lines = not_run_lines(data.points, width=60, series=data.series)
    ax.set_axis_off()
    text = "\n".join(["Not run:", *lines[:NOT_RUN_SHOWN]]) if lines else "every point ran"
    if len(lines) > NOT_RUN_SHOWN:
        text += f"\n... and {len(lines) - NOT_RUN_SHOWN} more"
    ax.text(0.0, 1.0, text, fontsize=5, va="top", family="monospace", transform=ax.transAxes)


@panel("spike rate per library and layer width; the input gain is calibrated to the dashed target rate")
def training_spike_rate(ax, data: PanelData) -> None:
    import seaborn as sns

    done = _finished(data)
    if done.empty:
        no_data(ax, "no finished points")
        return
    palette = colors(sorted(done["n"].unique()))
    sns.stripplot(done, x="label", y="spike_rate", hue="n", dodge=False, size=4, ax=ax, palette=palette)
    target = float(done["target_rate"].iloc[0])
    ax.axhline(target, color="black", ls="--", lw=0.8, label=f"target {target:g}")
    ax.set_ylim(0, max(2 * target, float(done["spike_rate"].max()) * 1.1))
    ax.set_xlabel("")
    ax.set_ylabel("spikes per neuron and step")
    ax.tick_params(axis="x", rotation=30, labelsize="x-small")
    legend(ax, title="n")


def _memory(ax, data: PanelData, column: str, ylabel: str, device: str) -> None:
    done = _finished(data)
    ax.set_xlabel("n (neurons)")
    ax.set_ylabel(ylabel)
    sub = done[done["device"] == device] if not done.empty else done
    if sub.empty or column not in sub or sub[column].isna().all():
        no_data(ax, f"no {device} points")
        return
    med = sub.groupby(["label", "n"], as_index=False)[column].median()
    palette = colors(sorted(med["label"].unique()))
    for label, group in med.groupby("label"):
        ax.plot(group["n"], group[column], marker="o", color=palette[label], label=label)
    _log_log(ax)
    legend(ax)


@panel("peak resident memory of each CPU point's fresh process, median over seeds")
def training_memory_cpu(ax, data: PanelData) -> None:
    _memory(ax, data, "peak_rss_mb", "peak RSS, whole process (MB)", "cpu")


@panel("CUDA peak allocated memory of each GPU point, median over seeds")
def training_memory_cuda(ax, data: PanelData) -> None:
    _memory(ax, data, "cuda_max_allocated_mb", "CUDA peak (MB)", "cuda")


@panel(
    "backward time when the time loop takes step t as x[t] versus x.unbind(0): indexing a tensor that needs "
    "gradients costs a full-size gradient per step, so backward grows with T squared"
)
def training_time_loop(ax, data: PanelData) -> None:
    done = _finished(data)
    if done.empty or "loop" not in done or not (done["loop"] == "index").any():
        no_data(ax, "no time_loop 'index' points in this experiment")
        return
    ours = done[done["loop"].isin(["unbind", "index"])]
    med = ours.groupby([data.series, "n", "T", "loop"])["backward_median_s"].median().unstack("loop").dropna()
    if med.empty:
        no_data(ax, "no pairs of index / unbind points")
        return
    labels = [f"{fw}\nn={n} T={t}" for fw, n, t in med.index]
    xs = np.arange(len(med))
    ax.bar(xs - 0.2, med["unbind"], width=0.4, label="x.unbind(0)")
    ax.bar(xs + 0.2, med["index"], width=0.4, label="x[t]")
    for x, (u, i) in zip(xs, med[["unbind", "index"]].to_numpy(), strict=True):
        ax.text(x + 0.2, i, f"{i / u:.1f}x", ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(xs, labels, fontsize="x-small")
    ax.set_yscale("log")
    ax.set_ylabel("backward time (s)")
    legend(ax)


def _published_2023(ax, name: str) -> None:
    """Open Neuromorphic's published 2023 times of one pass (GPU, means, no synchronisation) with the
    FLOP bound of their GPU: a reference series of another machine and method, not our measurements."""
    ref = read_reference_2023()
    peak, source = sanity.gpu_peak_flops(REFERENCE_2023_GPU, "float32", "highest")
    ns = np.array(sorted(ref["n"].unique()))
    bound = sanity.layer_flops(REFERENCE_2023_SETUP["T"], REFERENCE_2023_SETUP["batch"], 1) * ns**2 / peak
    sub = ref[ref["pass"] == name]
    palette = colors(sorted(ref["library"].unique()))
    for library, group in sub.groupby("library"):
        color = lighter(palette[library], 2)  # a reference series: pale
        ax.plot(group["n"], group["time_s"], marker="o", mfc="none", ls=":", color=color, label=library)
        below = group[group["time_s"] < np.interp(group["n"], ns, bound)]
        if not below.empty:
            ax.scatter(below["n"], below["time_s"], **INVALID)
    ax.plot(ns, bound, ls="--", color="black", lw=0.8, label=f"FLOP bound, {REFERENCE_2023_GPU} ({source})")
    ax.set_title(f"published 2023: {name} (reference only)")
    _log_log(ax)
    ax.set_ylabel("reported time (s)")
    legend(ax, loc="upper left")


PUBLISHED_2023 = (
    "pass of Open Neuromorphic's 2023 SNN library benchmarks as published (reference only: T=500, B=10, RTX 2070, "
    "mean of 100 runs, no GPU sync) against the FLOP bound of their GPU; red crosses are faster than the bound allows"
)


@panel("forward " + PUBLISHED_2023)
def training_published_2023_forward(ax, data: PanelData) -> None:
    _published_2023(ax, "forward")


@panel("backward " + PUBLISHED_2023)
def training_published_2023_backward(ax, data: PanelData) -> None:
    _published_2023(ax, "backward")
