"""Activity statistics of a run and the verdict whether its activity is plausible.

Sanity before performance: a point whose network is silent, saturated or regular is not a
performance result. The verdict is recorded with the point and keeps it out of scaling curves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from snnbench import pd14


def population_stats(
    senders: np.ndarray,
    times_ms: np.ndarray,
    first_ids: list[int],
    sizes: list[int],
    duration_ms: float,
) -> pd.DataFrame:
    """Per population: spike count, mean rate (spikes/s), mean ISI CV over neurons with at
    least three spikes, and how many such neurons there are."""
    first = np.asarray(first_ids)
    spikes = pd.DataFrame({"sender": senders, "time": times_ms}).sort_values(["sender", "time"])
    spikes["population"] = np.searchsorted(first, spikes["sender"].to_numpy(), side="right") - 1
    isi = spikes.groupby("sender")["time"].diff()
    per_neuron = (
        spikes.assign(isi=isi)
        .groupby("sender")
        .agg(
            population=("population", "first"),
            isi_mean=("isi", "mean"),
            isi_sd=("isi", lambda x: x.std(ddof=0)),
            n_isi=("isi", "count"),
        )
    )
    per_neuron = per_neuron[per_neuron["n_isi"] >= 2]
    per_neuron["cv"] = per_neuron["isi_sd"] / per_neuron["isi_mean"]
    counts = spikes.groupby("population").size()
    cv = per_neuron.groupby("population")["cv"].agg(["mean", "count"])
    rows = []
    for i, name in enumerate(pd14.POPULATIONS[: len(first_ids)]):
        n_spikes = int(counts.get(i, 0))
        rows.append(
            {
                "population": name,
                "neurons": int(sizes[i]),
                "spikes": n_spikes,
                "rate_hz": n_spikes / (sizes[i] * duration_ms * 1e-3) if sizes[i] else float("nan"),
                "cv_isi": float(cv["mean"].get(i, np.nan)),
                "cv_neurons": int(cv["count"].get(i, 0)),
            }
        )
    return pd.DataFrame(rows).set_index("population")


def verdict(stats: pd.DataFrame, bounds: dict, reference: tuple[dict, str] | None) -> dict:
    """Plausibility (no silent or saturated population, irregular firing) and the distance to
    published rates where they exist for this scale."""
    problems = []
    for name, row in stats.iterrows():
        if row["rate_hz"] < bounds["min_rate_hz"]:
            problems.append(f"{name} silent: {row['rate_hz']:.3g} spikes/s < {bounds['min_rate_hz']}")
        if row["rate_hz"] > bounds["max_rate_hz"]:
            problems.append(f"{name} too active: {row['rate_hz']:.3g} spikes/s > {bounds['max_rate_hz']}")
        if row["cv_neurons"] >= bounds["min_neurons_for_cv"]:
            if not bounds["min_cv_isi"] <= row["cv_isi"] <= bounds["max_cv_isi"]:
                problems.append(
                    f"{name} ISI CV {row['cv_isi']:.2f} outside [{bounds['min_cv_isi']}, {bounds['max_cv_isi']}]"
                )
    result = {
        "checked": True,
        "plausible": not problems,
        "problems": problems,
        "rates_hz": stats["rate_hz"].round(6).to_dict(),
        "cv_isi": {k: (None if np.isnan(v) else round(v, 6)) for k, v in stats["cv_isi"].items()},
        "spikes": {k: int(v) for k, v in stats["spikes"].items()},
        "reference": None,
    }
    if reference is not None:
        ref_rates, source = reference
        deviation = {p: float(abs(stats.loc[p, "rate_hz"] - r) / r) for p, r in ref_rates.items()}
        worst = max(deviation.values())
        result["reference"] = {
            "source": source,
            "rates_hz": ref_rates,
            "rel_deviation": {p: round(d, 6) for p, d in deviation.items()},
            "max_rel_deviation": round(worst, 6),
            "within_tolerance": bool(worst <= bounds["reference_max_rel_deviation"]),
        }
    return result


def unchecked(reason: str) -> dict:
    return {
        "checked": False,
        "plausible": None,
        "problems": [reason],
        "rates_hz": {},
        "cv_isi": {},
        "spikes": {},
        "reference": None,
    }
