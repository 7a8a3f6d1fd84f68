"""The validation verdict of many points at once (collect judges thousands): snnbench.network.validation's
`verdict`, vectorised over the long table of validate_point's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.network import ensemble as ensemble_module
from snnbench.network.validation import MEASURES, STATISTICS, bound_text, threshold


def _judge_rows(rows: pd.DataFrame, tolerance: dict) -> pd.DataFrame:
    """The compared rows of checked points with `judged` (the judged value), `allowed`, `measure`, `against`,
    `excess` and `ks` (the KS distance reported): `validation.judged` for many rows at once, vectorised."""
    from scipy.special import kolmogi

    for column in ("ks_reference", "ks_ensemble", "wasserstein_reference", "n_neurons_reference"):
        if column not in rows:
            rows = rows.assign(**{column: np.nan})
    compared = rows[rows["ks_reference"].notna() | rows["ks_ensemble"].notna()].copy()
    if compared.empty:
        return compared
    count = compared.groupby("path")["statistic"].transform("size").to_numpy(dtype=float)
    n = compared["n_neurons"].astype(float)
    m = compared["n_neurons_reference"].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        critical = kolmogi(tolerance["ks_alpha"] / count)
        noise = np.where((n >= 1) & (m >= 1), critical * np.sqrt((n + m) / (n * m)), np.inf)
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
    """Per point (path): the reference seeds' own largest excess (validation.point_seed_excess, many at once)."""
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
    """`verdict` for many points at once (collect judges thousands): rows is the long table of
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
        seeds = rows.dropna(subset=["ks_seeds"]).groupby(["path", "statistic"])["ks_seeds"].max()
        for stat in STATISTICS:
            if stat in seeds.index.get_level_values("statistic"):
                sub = seeds.xs(stat, level="statistic")
                out.loc[sub.index, f"ks_seeds_{stat}_max"] = sub
    out["validation_passed"] = pd.Series(problems == "", dtype=object).where(checked, None)
    reasons = meta.set_index("path")["reason"].fillna("not validated").astype(str)
    out["validation_problems"] = problems.where(checked, reasons)
    return out
