"""Rate agreement: do another simulator's rates agree with the reference simulator's on the same model?

Two simulators run "the same model" when experiment, model size, input and times match. The reference
simulator is the experiment's one reference (snnbench.network.references.reference_simulator: its
`validation.reference`, else the model's `reference_simulator`), named in the table's
`validation_reference` column. Their population rates agree when, for every population, the difference of
the seed means lies within what the reference's own seeds allow: the t prediction interval of
snnbench.network.judging.ensemble.rates_agree at level `ALPHA` over all populations (Bonferroni).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench.network.judging.ensemble import rates_agree

REFERENCE = "nest"  # where a table names no reference (tables from before the validation_reference column)
SAME_MODEL = ["experiment", "neuron_scale", "indegree_scale", "input", "t_presim_ms", "t_sim_ms"]
MIN_SEEDS = 2  # a spread needs at least two seeds on each side
ALPHA = 0.05  # chance that a correct simulator's rates are said to differ somewhere (all populations together)

__all__ = ["rates_agree", "agreement", "add_agreement", "reference_of", "rate_columns"]


def reference_of(points: pd.DataFrame, default: str = REFERENCE) -> str:
    """The reference simulator a table names (the most common value of its validation_reference
    column), else `default`."""
    if "validation_reference" in points:
        named = points["validation_reference"].dropna()
        named = named[named.astype(str) != ""]
        if not named.empty:
            return str(named.mode().iloc[0])
    return default


def rate_columns(points: pd.DataFrame) -> list[str]:
    """The per-population rate columns (rate_<population>_hz, in the model's order) with values."""
    return [c for c in points.columns if c.startswith("rate_") and c.endswith("_hz") and points[c].notna().any()]


def agreement(points: pd.DataFrame, reference: str | None = None) -> pd.DataFrame:
    """One row per (same model, simulator, population): seed means, spread, tolerance, verdict.
    Every finished point counts, valid or not (the question is the simulator's, not a run's: a
    simulator whose every run is invalid still gets its answer); a simulator is compared with the
    reference simulator's points of the same model (any resource shape: rates do not depend on
    threads). reference: the table's (reference_of) where None."""
    reference = reference or reference_of(points)
    cols = rate_columns(points)
    rows = []
    if not cols or "simulator" not in points:
        return pd.DataFrame(rows)
    finished = points[points["status"] == "ok"] if "status" in points else points
    for key, group in finished.groupby(SAME_MODEL, dropna=False):
        ref = group[group["simulator"] == reference]
        for simulator, sim in group.groupby("simulator"):
            if simulator == reference:
                continue
            for col in cols:
                ref_rates, sim_rates = ref[col].dropna(), sim[col].dropna()
                enough = ref["seed"].nunique() >= MIN_SEEDS and sim["seed"].nunique() >= MIN_SEEDS
                ref_seeds, sim_seeds = ref_rates.to_numpy()[:, None], sim_rates.to_numpy()[:, None]
                verdict = rates_agree(ref_seeds, sim_seeds, ALPHA / len(cols)) if enough else None
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


def add_agreement(points: pd.DataFrame, reference: str | None = None) -> pd.DataFrame:
    """Column `rates_agree_with_<reference>`: True/False for finished points of other simulators whose
    model the reference simulator also ran with enough seeds; empty otherwise."""
    points = points.copy()
    reference = reference or reference_of(points)
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
        finished = (points["status"] == "ok").to_numpy() if "status" in points else True
        points.loc[mask & finished, column] = bool(agrees)
    return points
