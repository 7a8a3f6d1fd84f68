"""The validation verdict: is a point's spike statistics within what its reference allows? Judged once, at
collect, for all points at once (vectorised: collect judges thousands), from validate_point's distances
(snnbench.network.validation) and the config's tolerance, so that changing a tolerance re-judges without
recomputing anything.

The verdict: with a reference ensemble of three or more seeds of the reference simulator, a point fails
where a population's sample mean of a statistic lies outside what the seeds' own spread allows
(snnbench.network.judging.ensemble). With one reference run, a point fails if a KS distance to it exceeds what the
published seed-to-seed spread (`ks_margin`) and the sampling noise of the subsample explain
together. The sampling noise is the asymptotic two-sample KS critical value
K⁻¹(a) · sqrt((n + m) / (n m)), with n, m the neurons behind each sample (for correlations too:
pairs of the same neurons are not independent samples) and a = `ks_alpha` / the number of
comparisons of the point (Bonferroni: `ks_alpha` is the chance that an unbiased point is flagged).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from snnbench.network.judging import ensemble as ensemble_module
from snnbench.network.validation import STATISTICS

# How a problem names the ensemble rule's judged value on each scale (snnbench.network.judging.ensemble.offsets).
MEASURES = {"glog": "glog mean off by", "log": "log mean off by", "linear": "mean off by"}


def threshold(seed_excess: float) -> float:
    """What a point's excess must pass to fail: 1, or the reference seeds' own largest excess where higher."""
    return max(1.0, seed_excess) if math.isfinite(seed_excess) else 1.0


def bound_text(allowed: float, scale: float) -> str:
    return f"{allowed * scale:.3f}" + (f" (x{scale:.2f}: the reference seeds' own largest excess)" if scale > 1 else "")


def ks_critical(alpha, n, m):
    """Asymptotic two-sample KS critical value at level alpha for samples of n and m (numbers or arrays):
    K⁻¹(alpha) · sqrt((n + m) / (n m)), K the Kolmogorov distribution (scipy.special.kolmogi); inf where a
    sample is empty."""
    from scipy.special import kolmogi

    n, m = np.asarray(n, dtype=float), np.asarray(m, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((n >= 1) & (m >= 1), kolmogi(alpha) * np.sqrt((n + m) / (n * m)), np.inf)


def _judge_rows(rows: pd.DataFrame, tolerance: dict) -> pd.DataFrame:
    """The compared rows of checked points with `judged` (the judged value), `allowed`, `measure`, `against`,
    `excess` and `ks` (the KS distance reported): with a reference ensemble of enough seeds
    the ensemble rule (snnbench.network.judging.ensemble.offsets), else the KS distance to the one reference run."""
    for column in ("ks_reference", "ks_ensemble", "wasserstein_reference", "n_neurons_reference"):
        if column not in rows:
            rows = rows.assign(**{column: np.nan})
    compared = rows[rows["ks_reference"].notna() | rows["ks_ensemble"].notna()].copy()
    if compared.empty:
        return compared
    count = compared.groupby("path")["statistic"].transform("size").to_numpy(dtype=float)
    n = compared["n_neurons"].astype(float)
    m = compared["n_neurons_reference"].astype(float)
    noise = ks_critical(tolerance["ks_alpha"] / count, n, m)
    one_run = compared["statistic"].map(tolerance["ks_margin"]).astype(float).to_numpy() + noise
    seeds, off = np.full(len(compared), np.nan), np.full(len(compared), np.nan)
    scales = np.full(len(compared), "linear", dtype=object)
    has_ensemble = compared["ks_ensemble"].notna().to_numpy() & ("ensemble_means" in compared)
    if has_ensemble.any():
        part = compared[has_ensemble]
        off[has_ensemble], seeds[has_ensemble], scales[has_ensemble] = ensemble_module.offsets(
            part["mean"].tolist(),
            part["ensemble_means"].tolist(),
            part["ensemble_self"].tolist(),
            tolerance["alpha"] / count[has_ensemble],
            part["ensemble_sems"].tolist() if "ensemble_sems" in part else None,
        )
    use = np.isfinite(seeds) & np.isfinite(off)
    compared["ks"] = compared["ks_ensemble"].where(compared["ks_ensemble"].notna(), compared["ks_reference"])
    compared["judged"] = np.where(use, off, compared["ks_reference"])
    compared["allowed"] = np.where(use, seeds, one_run)
    counts = compared["n_ensemble"] if "n_ensemble" in compared else pd.Series(0, index=compared.index)
    seeds_text = "reference seeds (n=" + counts.fillna(0).astype(int).astype(str) + ")"
    compared["against"] = np.where(use, seeds_text, "reference")
    compared["measure"] = np.where(use, pd.Series(scales).map(MEASURES).to_numpy(), "KS")
    guards = (
        _seed_excess(compared[has_ensemble], tolerance["alpha"] / count[has_ensemble]) if has_ensemble.any() else {}
    )
    compared["seed_excess"] = compared["path"].map(guards).astype(float)
    compared["scale"] = np.where(use, compared["seed_excess"].map(threshold), 1.0)
    compared["excess"] = compared["judged"] / (compared["allowed"] * compared["scale"])
    return compared


def _seed_excess(rows: pd.DataFrame, alphas: np.ndarray) -> dict:
    """Per point (path): the reference seeds' own largest excess (ensemble.seed_excess)."""
    if rows.empty:
        return {}
    sems = rows["ensemble_sems"] if "ensemble_sems" in rows else pd.Series(None, index=rows.index, dtype=object)
    parts = pd.DataFrame(
        {"means": rows["ensemble_means"], "self": rows["ensemble_self"], "alpha": alphas, "sems": sems},
        index=rows.index,
    ).groupby(rows["path"], sort=False)
    return {
        path: ensemble_module.seed_excess(
            part["means"].tolist(), part["self"].tolist(), part["alpha"].tolist(), part["sems"].tolist()
        )
        for path, part in parts
    }


def judge_table(rows: pd.DataFrame, meta: pd.DataFrame, tolerance: dict) -> pd.DataFrame:
    """The verdict of many points at once: rows is the long table of
    validate_point's rows with a `path` column, meta has path, checked, reason, reference per
    point. Returns one row per point (index path) with the columns that collect adds."""

    out = pd.DataFrame(index=pd.Index(meta["path"], name="path"))
    checked = meta.set_index("path")["checked"].astype(bool)
    out["validation_checked"] = checked
    by_path = meta.set_index("path")
    out["validation_reference_point"] = by_path["reference"]
    if "reference_simulator" in by_path:
        out["validation_reference"] = by_path["reference_simulator"]
    wide_columns = [
        f"{kind}_{stat}{suffix}"
        for stat in STATISTICS
        for kind, suffix in (("ks", "_max"), ("wasserstein", "_max"), ("ks_seeds", "_max"), ("validation_excess", ""))
    ]
    for column in [*wide_columns, "validation_seed_excess"]:
        out[column] = np.nan
    problems = pd.Series("", index=out.index, dtype=object)
    # (no row compared with a reference, e.g. where the reference point failed: no such column)
    if not rows.empty and ("ks_reference" in rows or "ks_ensemble" in rows):
        rows = rows[rows["path"].isin(checked.index[checked])]
        compared = _judge_rows(rows, tolerance)
        if not compared.empty:
            worst = compared.groupby(["path", "statistic"])[["ks", "wasserstein_reference", "excess"]].max()
            for stat in STATISTICS:
                if stat in worst.index.get_level_values("statistic"):
                    sub = worst.xs(stat, level="statistic")
                    out.loc[sub.index, f"ks_{stat}_max"] = sub["ks"]
                    out.loc[sub.index, f"wasserstein_{stat}_max"] = sub["wasserstein_reference"]
                    out.loc[sub.index, f"validation_excess_{stat}"] = sub["excess"]
            guard = compared.groupby("path")["seed_excess"].first()
            out.loc[guard.index, "validation_seed_excess"] = guard
            bad = compared[compared["judged"] > compared["allowed"] * compared["scale"]]
            bad = bad.iloc[np.argsort(bad["statistic"].map(STATISTICS.index).to_numpy(), kind="stable")]
            text = (
                bad["population"]
                + " "
                + bad["statistic"]
                + ": "
                + bad["measure"]
                + " "
                + bad["judged"].map("{:.3f}".format).astype(str)  # str also when empty
                + " to "
                + bad["against"].astype(str)
                + " > "
                + pd.Series(list(map(bound_text, bad["allowed"], bad["scale"])), index=bad.index, dtype=object)
            )
            problems.update(text.groupby(bad["path"]).agg("; ".join))
        known = rows.dropna(subset=["ks_seeds"]) if "ks_seeds" in rows else rows.iloc[:0].assign(ks_seeds=[])
        seeds = known.groupby(["path", "statistic"])["ks_seeds"].max()
        for stat in STATISTICS:
            if stat in seeds.index.get_level_values("statistic"):
                sub = seeds.xs(stat, level="statistic")
                out.loc[sub.index, f"ks_seeds_{stat}_max"] = sub
    out["validation_passed"] = pd.Series(problems == "", dtype=object).where(checked, None)
    reasons = meta.set_index("path")["reason"].fillna("not validated").astype(str)
    out["validation_problems"] = problems.where(checked, reasons)
    return out


def judge_point(result: dict, tolerance: dict) -> pd.Series:
    """One point's verdict (`judge_table` on its validate_point result: checked, reason, rows), for tools
    that judge runs outside collect (snnbench.dev.bench_validation)."""
    rows = pd.DataFrame(result.get("rows") or []).assign(path="point")
    meta = pd.DataFrame(
        [
            {
                "path": "point",
                "checked": result["checked"],
                "reason": result.get("reason"),
                "reference": result.get("reference"),
            }
        ]
    )
    return judge_table(rows, meta, tolerance).loc["point"]
