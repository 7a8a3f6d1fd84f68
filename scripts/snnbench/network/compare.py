"""Simulators side by side: do another simulator's rates agree with NEST's on the same model?

Two simulators run "the same model" when experiment, model size, input and times match. Their
population rates agree when, for every population, the difference of the seed means is within
the seed-to-seed spread: at most twice the larger range over seeds of the two simulators (few
seeds underestimate the spread) plus 2 % of NEST's rate (seeds that agree closely), as in the
oracle test against INM-6's reference implementation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REFERENCE = "nest"
SAME_MODEL = ["experiment", "neuron_scale", "indegree_scale", "input", "t_presim_ms", "t_sim_ms"]
MIN_SEEDS = 2  # a spread needs at least two seeds on each side


def rates_agree(reference: np.ndarray, other: np.ndarray) -> dict[str, np.ndarray]:
    """The one rate-agreement rule. reference, other: rates (Hz), one row per seed and one column
    per population (or one column). Per population: |difference of the seed means|, the spread
    (larger range over seeds of the two), the tolerance 2 x spread + 2 % of the reference's mean,
    and whether the difference is within it."""
    reference, other = np.atleast_2d(reference), np.atleast_2d(other)
    reference_mean = reference.mean(axis=0)
    spread = np.maximum(np.ptp(reference, axis=0), np.ptp(other, axis=0))
    difference = np.abs(other.mean(axis=0) - reference_mean)
    tolerance = 2 * spread + 0.02 * reference_mean
    return {"difference": difference, "spread": spread, "tolerance": tolerance, "agrees": difference <= tolerance}


def rate_columns(points: pd.DataFrame) -> list[str]:
    """The per-population rate columns (rate_<population>_hz, in the model's order) with values."""
    return [c for c in points.columns if c.startswith("rate_") and c.endswith("_hz") and points[c].notna().any()]


def agreement(points: pd.DataFrame, reference: str = REFERENCE) -> pd.DataFrame:
    """One row per (same model, simulator, population): seed means, spread, tolerance, verdict.
    Only valid points count; a simulator is compared with the reference simulator's points of
    the same model (any resource shape: rates do not depend on threads)."""
    cols = rate_columns(points)
    rows = []
    if not cols or "simulator" not in points:
        return pd.DataFrame(rows)
    valid = points[points["valid"].astype(bool)]
    for key, group in valid.groupby(SAME_MODEL, dropna=False):
        ref = group[group["simulator"] == reference]
        for simulator, sim in group.groupby("simulator"):
            if simulator == reference:
                continue
            for col in cols:
                ref_rates, sim_rates = ref[col].dropna(), sim[col].dropna()
                enough = ref["seed"].nunique() >= MIN_SEEDS and sim["seed"].nunique() >= MIN_SEEDS
                verdict = rates_agree(ref_rates.to_numpy()[:, None], sim_rates.to_numpy()[:, None]) if enough else None
                spread = verdict["spread"][0] if enough else np.nan
                tolerance = verdict["tolerance"][0] if enough else np.nan
                difference = abs(sim_rates.mean() - ref_rates.mean()) if len(ref_rates) else np.nan
                rows.append(
                    {
                        **dict(zip(SAME_MODEL, key, strict=True)),
                        "simulator": simulator,
                        "reference": reference,
                        "population": col.removeprefix("rate_").removesuffix("_hz"),
                        "rate_hz": sim_rates.mean(),
                        "reference_rate_hz": ref_rates.mean() if len(ref_rates) else np.nan,
                        "difference_hz": difference,
                        "spread_hz": spread,
                        "tolerance_hz": tolerance,
                        "seeds": sim["seed"].nunique(),
                        "reference_seeds": ref["seed"].nunique(),
                        "agrees": bool(verdict["agrees"][0]) if enough else None,
                    }
                )
    return pd.DataFrame(rows)


def add_agreement(points: pd.DataFrame, reference: str = REFERENCE) -> pd.DataFrame:
    """Column `rates_agree_with_<reference>`: True/False for points of other simulators whose
    model the reference simulator also ran with enough seeds; empty otherwise."""
    points = points.copy()
    column = f"rates_agree_with_{reference}"
    points[column] = None
    table = agreement(points, reference)
    if table.empty:
        return points
    verdicts = table.dropna(subset=["agrees"]).groupby([*SAME_MODEL, "simulator"], dropna=False)["agrees"].all()
    for key, agrees in verdicts.items():
        mask = np.ones(len(points), dtype=bool)
        for name, value in zip([*SAME_MODEL, "simulator"], key, strict=True):
            mask &= (points[name] == value).to_numpy()
        points.loc[mask & points["valid"].astype(bool).to_numpy(), column] = bool(agrees)
    return points
