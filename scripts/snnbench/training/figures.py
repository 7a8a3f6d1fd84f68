"""Figures of an snn-training experiment from its points table, and of the published 2023 numbers.

- training_time: forward, backward and step time against n per library (log axes; bars: IQR),
  with the FLOP lower bound, and the warm-up / compile time.
- training_spike_rate: each library's spike rate beside the target the gain was calibrated to.
- training_memory: peak resident memory (CPU points) and CUDA peak allocated memory (GPU points).
- training_time_loop: backward time with x[t] against unbind for loops snnbench writes.
- training_published_2023: Open Neuromorphic's 2023 published times, a separate reference
  series (another machine, another method), against the FLOP bound of their GPU.
Points that did not run are listed under the time figure with the reason; points that failed
the sanity check are red crosses, never part of a curve.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from snnbench.training import sanity  # noqa: E402

PALETTE = "colorblind"
WIDTH_IN = 3.5
INVALID = {"marker": "X", "color": "#d62728", "s": 40, "zorder": 5}
PASSES = ("forward", "backward", "step")
REFERENCE_2023 = Path(__file__).with_name("reference_2023.csv")
REFERENCE_2023_GPU = "RTX 2070"
REFERENCE_2023_SETUP = {"T": 500, "batch": 10}


def read_reference_2023() -> pd.DataFrame:
    """The published 2023 times (see the header of reference_2023.csv for the source)."""
    return pd.read_csv(REFERENCE_2023, comment="#")


def _label(points: pd.DataFrame) -> pd.Series:
    """Library, with the loop form where snnbench writes the loop and it is not the default."""
    label = points["framework"].astype(str)
    indexed = points.get("loop", pd.Series("", index=points.index)) == "index"
    label[indexed] = label[indexed] + " (x[t])"
    device = points["device"].astype(str)
    if device.nunique() > 1:
        label = label + " / " + device
    return label


def _ok(points: pd.DataFrame) -> pd.DataFrame:
    done = points[points["status"] == "ok"].copy()
    if not done.empty:
        done["label"] = _label(done)
    return done


def _no_data(ax, text="no finished points") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize="small")


def _medians(done: pd.DataFrame, column: str) -> pd.DataFrame:
    """Median over seeds per label and n of a column and its quartile columns."""
    base = column.removesuffix("_median_s")
    cols = [column, f"{base}_q1_s", f"{base}_q3_s"]
    return done.groupby(["label", "n"], as_index=False)[cols].median()


def not_run_lines(points: pd.DataFrame, width: int = 110) -> list[str]:
    """One line per distinct reason a point did not run (skipped or failed)."""
    bad = points[points["status"] != "ok"]
    lines = []
    for (status, reason), group in bad.groupby(["status", "failure_reason"]):
        first = str(reason).splitlines()[0] if isinstance(reason, str) and reason else "unknown"
        who = ", ".join(sorted(set(_label(group))))
        lines.append(textwrap.shorten(f"{status}: {who}: {first}", width=width, placeholder=" ..."))
    return lines


def training_time(points: pd.DataFrame, fig) -> None:
    """Median forward / backward / step time against n per library, and warm-up (compile) time."""
    lines = not_run_lines(points)
    if lines:
        top, bottom = fig.subfigures(2, 1, height_ratios=[4, 0.3 + 0.12 * min(len(lines), 12)])
        bottom.text(0.0, 1.0, "Not run:\n" + "\n".join(lines[:12]), fontsize=5, va="top", family="monospace")
    else:
        top = fig
    axes = top.subplots(1, 4)
    done = _ok(points)
    valid = done[done["valid"].astype(bool)] if not done.empty else done
    for ax, name in zip(axes, PASSES, strict=False):
        ax.set_title(name, fontsize="small")
        ax.set_xlabel("n (neurons)")
        if valid.empty:
            _no_data(ax)
            continue
        med = _medians(valid, f"{name}_median_s")
        for i, (label, group) in enumerate(med.groupby("label")):
            color = sns.color_palette(PALETTE, med["label"].nunique())[i]
            yerr = [
                group[f"{name}_median_s"] - group[f"{name}_q1_s"],
                group[f"{name}_q3_s"] - group[f"{name}_median_s"],
            ]
            ax.errorbar(group["n"], group[f"{name}_median_s"], yerr=yerr, marker="o", ms=3, capsize=2, color=color)
            ax.plot([], [], marker="o", color=color, label=label)
        bound = valid.groupby("n")["min_forward_s"].min() * (2 if name == "step" else 1)
        ax.plot(bound.index, bound.values, ls="--", marker="_", ms=12, color="black", lw=0.8, label="FLOP bound")
        bad = done[~done["valid"].astype(bool)]
        if not bad.empty:
            ax.scatter(bad["n"], bad[f"{name}_median_s"], label="fails sanity check", **INVALID)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
    axes[0].set_ylabel("time per pass (s)")
    ax = axes[3]
    ax.set_title("warm-up beyond a settled step", fontsize="small")
    if done.empty:
        _no_data(ax)
    else:
        compile_s = done.groupby("label")["compile_s"].median().sort_values()
        ax.barh(compile_s.index, compile_s.values.clip(min=1e-4), color="grey")
        ax.set_xscale("log")
        ax.set_xlabel("compile / first-call time (s)")
        ax.tick_params(axis="y", labelsize="x-small")
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        top.legend(handles, labels, fontsize="x-small", frameon=False, loc="outside right upper")


def training_spike_rate(points: pd.DataFrame, fig) -> None:
    """Spike rate per library (dots per n) beside the target rate the input gain was calibrated to."""
    ax = fig.subplots()
    done = _ok(points)
    if done.empty:
        _no_data(ax)
        return
    sns.stripplot(done, x="label", y="spike_rate", hue="n", dodge=False, size=4, ax=ax, palette=PALETTE)
    target = float(done["target_rate"].iloc[0])
    ax.axhline(target, color="black", ls="--", lw=0.8, label=f"target {target:g}")
    ax.set_ylim(0, max(2 * target, float(done["spike_rate"].max()) * 1.1))
    ax.set_xlabel("")
    ax.set_ylabel("spikes per neuron and step")
    ax.tick_params(axis="x", rotation=30, labelsize="x-small")
    ax.legend(fontsize="x-small", frameon=False, title="n", title_fontsize="x-small")


def training_memory(points: pd.DataFrame, fig) -> None:
    """Peak resident memory of the point's process (CPU) and CUDA peak allocated memory (GPU)."""
    axes = fig.subplots(1, 2)
    done = _ok(points)
    panels = [
        ("peak_rss_mb", "peak RSS, whole process (MB)", "cpu"),
        ("cuda_max_allocated_mb", "CUDA peak (MB)", "cuda"),
    ]
    for ax, (column, ylabel, device) in zip(axes, panels, strict=True):
        ax.set_xlabel("n (neurons)")
        ax.set_ylabel(ylabel)
        sub = done[done["device"] == device] if not done.empty else done
        if sub.empty or column not in sub or sub[column].isna().all():
            _no_data(ax, f"no {device} points")
            continue
        med = sub.groupby(["label", "n"], as_index=False)[column].median()
        sns.lineplot(med, x="n", y=column, hue="label", marker="o", ax=ax, palette=PALETTE)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.legend(fontsize="x-small", frameon=False)


def training_time_loop(points: pd.DataFrame, fig) -> None:
    """Backward time when our loop takes step t as x[t] against x.unbind(0) (same library, n, T)."""
    ax = fig.subplots()
    done = _ok(points)
    if done.empty or "loop" not in done or not (done["loop"] == "index").any():
        _no_data(ax, "no time_loop 'index' points in this experiment")
        return
    ours = done[done["loop"].isin(["unbind", "index"])]
    med = ours.groupby(["framework", "n", "T", "loop"])["backward_median_s"].median().unstack("loop")
    med = med.dropna()
    if med.empty:
        _no_data(ax, "no pairs of index / unbind points")
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
    ax.legend(fontsize="x-small", frameon=False)


def training_published_2023(points: pd.DataFrame, fig) -> None:
    """Open Neuromorphic's published 2023 times (GPU, means, no synchronisation) with the FLOP
    bound of their GPU: a reference series of another machine and method, not our measurements."""
    top, bottom = fig.subfigures(2, 1, height_ratios=[6, 1])
    axes = top.subplots(1, 2, sharey=True)
    ref = read_reference_2023()
    peak, source = sanity.gpu_peak_flops(REFERENCE_2023_GPU, "float32", "highest")
    ns = np.array(sorted(ref["n"].unique()))
    bound = sanity.layer_flops(REFERENCE_2023_SETUP["T"], REFERENCE_2023_SETUP["batch"], 1) * ns**2 / peak
    for ax, name in zip(axes, ("forward", "backward"), strict=True):
        sub = ref[ref["pass"] == name]
        for i, (library, group) in enumerate(sub.groupby("library")):
            color = sns.color_palette("pastel", sub["library"].nunique())[i]
            ax.plot(group["n"], group["time_s"], marker="o", mfc="none", ls=":", color=color, label=library)
            below = group[group["time_s"] < np.interp(group["n"], ns, bound)]
            if not below.empty:
                ax.scatter(below["n"], below["time_s"], **INVALID)
        ax.plot(ns, bound, ls="--", color="black", lw=0.8, label=f"FLOP bound, {REFERENCE_2023_GPU}")
        ax.set_title(f"published 2023: {name}", fontsize="small")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n (neurons)")
    axes[0].set_ylabel("reported time (s)")
    handles, labels = axes[0].get_legend_handles_labels()
    top.legend(handles, labels, fontsize="x-small", frameon=False, loc="outside right upper")
    bottom.text(
        0.0,
        0.5,
        "Reference only: Open Neuromorphic 2023 (T=500, B=10, RTX 2070, mean of 100 runs, no GPU sync); "
        f"red: faster than the bound ({source}).",
        fontsize=5,
    )


@dataclass(frozen=True)
class Figure:
    draw: Callable
    caption: str
    width_in: float = WIDTH_IN
    height_in: float = 2.6


FIGURES = {
    "training_time": Figure(
        training_time,
        "Median forward, backward and step time against layer width per library (bars: IQR over repetitions; "
        "dashed: the FLOP lower bound), and warm-up time beyond a settled step; points that did not run are "
        "listed with the reason.",
        width_in=4 * WIDTH_IN * 0.75,
        height_in=3.2,
    ),
    "training_spike_rate": Figure(
        training_spike_rate,
        "Spike rate per library and layer width; the input gain is calibrated to the dashed target rate.",
        width_in=1.5 * WIDTH_IN,
    ),
    "training_memory": Figure(
        training_memory,
        "Peak resident memory of each point's fresh process (CPU) and CUDA peak allocated memory (GPU).",
        width_in=2 * WIDTH_IN,
    ),
    "training_time_loop": Figure(
        training_time_loop,
        "Backward time when the time loop takes step t as x[t] versus x.unbind(0): indexing a tensor that needs "
        "gradients costs a full-size gradient per step, so backward grows with T squared.",
        width_in=1.5 * WIDTH_IN,
    ),
    "training_published_2023": Figure(
        training_published_2023,
        "Published 2023 times of Open Neuromorphic's SNN library benchmarks (another GPU and method; reference "
        "only) against the FLOP bound of their GPU; red crosses are faster than the bound allows.",
        width_in=2.5 * WIDTH_IN,
    ),
}


def draw(name: str, points: pd.DataFrame, png: str, pdf: str) -> None:
    sns.set_theme(context="paper", style="ticks", palette=PALETTE, font_scale=1.0)
    spec = FIGURES[name]
    fig = plt.figure(figsize=(spec.width_in, spec.height_in), layout="constrained")
    spec.draw(points, fig)
    experiment = points["experiment"].iloc[0] if not points.empty else ""
    fig.suptitle(experiment, fontsize="small")
    fig.savefig(png, dpi=200)
    fig.savefig(pdf)
    plt.close(fig)
