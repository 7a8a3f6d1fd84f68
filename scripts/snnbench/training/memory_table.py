"""Memory strategies against vanilla BPTT: peak memory and step time per library, n and T, and their ratios.

`python -m snnbench.training.memory_table POINTS_CSV [...]` (what `make bench-training-memory` prints):
per library, width n and time steps T, the median over seeds of each point's median step time and median
step peak tensor memory (snnbench.training.memory), the phase that reaches it (forward / backward), and per
strategy the ratios against vanilla's on the same point: memory ratio = peak / vanilla's peak, speed-up =
vanilla's step time / the strategy's. Beside the tensors' peak, the process's (peak RSS, `peak_rss_mb`) and
its change against vanilla's (`rss_change_mb`): the interpreter and libraries count there, and the first
non-reentrant checkpoint imports torch._dynamo and sympy, so it can rise where the tensors' peak falls. Below
them the published ratios (REFERENCES), measured on other networks and machines: references, not results; the
rows of the convolutional network (architecture conv / conv-bn) carry Liang et al.'s ratios on theirs
(0.41x memory / 2.13x speed-up; with batch norm 0.33x / 1.94x) in a column `paper`.
Only valid points count (ran, passed the FLOP check, gradients equal to vanilla's).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

# Published ratios against storing everything (memory ratio, speed-up): what the figures draw as references.
REFERENCES = (
    {
        "source": "Liang et al., DATE 2022: recompute neuron state, fused kernel (CIFAR10, GPU, vs vanilla PyTorch)",
        "label": "Liang et al. 2022",
        "memory_ratio": 0.41,
        "speedup": 2.13,
    },
    {
        "source": "Liang et al., DATE 2022, with batch norm",
        "label": "Liang et al. 2022, BN",
        "memory_ratio": 0.33,
        "speedup": 1.94,
    },
    {
        "source": "SpikingJelly memopt tutorial: VGG on CIFAR10-DVS, RTX 4090, 1022 MB -> 589 MB at the same time",
        "label": "SpikingJelly memopt",
        "memory_ratio": round(589 / 1022, 2),
        "speedup": 1.0,
    },
)
# Liang et al.'s ratios on their own convolutional network, beside our convolutional rows.
PAPER = {"conv": REFERENCES[0], "conv-bn": REFERENCES[1]}
KEYS = ["framework", "architecture", "device", "n", "T", "batch"]
# Medians over seeds; the phase columns are absent from tables made before the forward / backward split.
MEDIANS = ["step_median_s", "step_peak_mb", "forward_peak_mb", "backward_peak_mb", "kept_mb", "peak_rss_mb"]


def medians(points: pd.DataFrame) -> pd.DataFrame:
    """Valid finished points: median over seeds of step time and step peak memory, per point and strategy."""
    ok = points[(points["status"] == "ok") & points["valid"].astype(bool)].copy()
    if ok.empty or "step_peak_mb" not in ok:
        return pd.DataFrame(columns=[*KEYS, "strategy_id", *MEDIANS, "peak_phase"])
    if "strategy_id" not in ok:
        ok["strategy_id"] = "vanilla"
    if "architecture" not in ok:  # tables from before the convolutional network: all Linear + LIF
        ok["architecture"] = "linear"
    ok["architecture"] = ok["architecture"].fillna("linear")
    if "peak_phase" not in ok:  # tables from before the forward / backward split
        ok["peak_phase"] = None
    for column in MEDIANS:
        if column not in ok:
            ok[column] = float("nan")
    groups = ok.groupby([*KEYS, "strategy_id"], as_index=False)
    med = groups[MEDIANS].median()
    # the step's memory is deterministic, so every seed's phase is the same; a mix would say "mixed"
    med["peak_phase"] = groups["peak_phase"].agg(_one_phase)["peak_phase"].to_numpy()
    return med


def _one_phase(phases: pd.Series) -> str | None:
    found = set(phases.dropna())
    return found.pop() if len(found) == 1 else ("mixed" if found else None)


def ratios(points: pd.DataFrame) -> pd.DataFrame:
    """Each strategy's medians with vanilla's on the same point and the ratios against them."""
    med = medians(points)
    vanilla = med[med["strategy_id"] == "vanilla"][[*KEYS, "step_median_s", "step_peak_mb", "peak_rss_mb"]]
    vanilla = vanilla.rename(
        columns={"step_median_s": "vanilla_step_s", "step_peak_mb": "vanilla_peak_mb", "peak_rss_mb": "vanilla_rss_mb"}
    )
    out = med.merge(vanilla, on=KEYS, how="left")
    out["memory_ratio"] = out["step_peak_mb"] / out["vanilla_peak_mb"]
    out["rss_change_mb"] = out["peak_rss_mb"] - out["vanilla_rss_mb"]
    out["speedup"] = out["vanilla_step_s"] / out["step_median_s"]
    # The seed paper's own network beside ours: its ratios on the conv rows (references, not results).
    out["paper_memory_ratio"] = out["architecture"].map(lambda a: PAPER[a]["memory_ratio"] if a in PAPER else None)
    out["paper_speedup"] = out["architecture"].map(lambda a: PAPER[a]["speedup"] if a in PAPER else None)
    return out.sort_values([*KEYS, "strategy_id"]).reset_index(drop=True)


def paper_label(architecture: str) -> str:
    ref = PAPER.get(architecture)
    return f"{ref['memory_ratio']:.2f}x / {ref['speedup']:.2f}x" if ref else ""


def table(points: pd.DataFrame) -> str:
    """The ratios as text: one line per library, n, T and strategy (the tensors' peak, its phase, the process's
    peak RSS and its change against vanilla's), the references below."""
    rows = ratios(points)
    if rows.empty:
        return "no valid points with step memory"
    columns = ["framework", "architecture", "n", "T", "strategy_id", "step_peak_mb", "peak_phase", "memory_ratio"]
    shown = rows[[*columns, "peak_rss_mb", "rss_change_mb", "step_median_s", "speedup"]].copy()
    if rows["architecture"].isin(list(PAPER)).any():
        shown["paper"] = rows["architecture"].where(rows["strategy_id"] != "vanilla", "").map(paper_label)
    lines = [shown.to_string(index=False, float_format=lambda v: f"{v:.3g}")]
    lines.append("")
    lines.append("published ratios against storing everything (other networks and machines; references only):")
    for ref in REFERENCES:
        lines.append(f"  memory {ref['memory_ratio']:.2f}x, speed-up {ref['speedup']:.2f}x: {ref['source']}")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    missing = [path for path in argv if not Path(path).is_file()]
    if not argv or missing:
        raise SystemExit(
            f"error: no points table at {', '.join(missing) or '(none named)'}: run the experiment first "
            "(e.g. make bench-training-memory), then name its results/<experiment>/points.csv"
        )
    points = pd.concat([pd.read_csv(path) for path in argv], ignore_index=True)
    print(table(points))


if __name__ == "__main__":
    main(sys.argv[1:])
