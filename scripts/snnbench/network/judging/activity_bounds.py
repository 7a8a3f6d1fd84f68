"""Where the activity check's bounds come from: the model's own rates, the reference ensemble, or the config.

A fixed ceiling (the config's 50 spikes/s) marks correct runs implausible: INM-6's own simulation of the
multi-area model at N = K = 0.01 (seed 6) fires STPp-4E at 54.0 spikes/s. The bounds follow the data instead:

- model: a model's reference rates (NetworkModel.activity_rates: PD14's published rates for the point's size,
  else the full-scale ones; the multi-area model's mean-field rates; hpc_benchmark's documented upper end, at
  its own in-degrees only). The ceiling is CEILING_FACTOR x the highest of them, the silence floor the lowest
  / SILENCE_FACTOR, network-wide (per population they would judge down-scaled networks, whose populations
  move apart: PD14 at K = 1, N = 0.01 fires L23E at 13.5 against 0.90 published). The ISI CV range stays the
  config's (no model here publishes CVs).
- ensemble: where the point has a reference ensemble of seeds (validation), per population: ceiling
  ENSEMBLE_MARGIN x the members' highest rate, floor their lowest / SILENCE_FACTOR, ISI CV within
  [their lowest / ENSEMBLE_MARGIN, their highest x ENSEMBLE_MARGIN]. First the ensemble is itself judged
  against the model's bounds and, where the model publishes rates for the point's size, its mean rate per
  population against them (`reference_max_rel_deviation`): a broken reference is flagged, and the point
  keeps the model's bounds, rather than widening them.
- default: the config's `activity_check`, where the model has no data.

Why the factors (measured, not assumed): the largest excursions of correct runs from their model's rates seen
here are PD14 at K = 1 and N = 0.005-0.02, in-degrees deliberately not compensated, at 2.8 x the highest
published rate (L23I 24.2 against L5I 8.63 spikes/s; docs/same-network.md), and the multi-area model at N = K
= 0.01, 1.29 x its theory's highest (54.0 against 41.9); a ceiling of 4 x covers both, while a network in
runaway excitation fires near 1 / t_ref (500 spikes/s for PD14). The floor, 1 / 10 of the lowest rate, is
PD14's (its published rates are of the size the point runs, or full scale); the multi-area model's theory is a
ceiling only (`upper_only`), as down-scaled runs, INM-6's own included, fire far below it (35 x at N = K = 0.01
with V1 and V2 simulated). Seeds of one simulator spread by a few percent (PD14 L5E over ten seeds 6.07-6.84 spikes/s),
so 2 x the ensemble's highest rate is a saturation, not a seed; how far a point's statistics may lie from the
seeds' is the validation's question (snnbench.network.judging.ensemble), not this one's.

A floor is judged only where a population's expected spike count at it reaches MIN_FLOOR_SPIKES: below that a
small population in a short window can fall under it by chance (Poisson counts; a 16-neuron population at
1 spike/s over 300 ms expects 5 spikes).
"""

from __future__ import annotations

import numpy as np

CEILING_FACTOR = 4.0
SILENCE_FACTOR = 10.0
ENSEMBLE_MARGIN = 2.0
MIN_FLOOR_SPIKES = 3  # at 10 x the floor a Poisson count falls below 3 with probability 1e-11
MIN_MEMBERS = 2  # an ensemble's spread needs two runs


def at(bound, population: str) -> float:
    """A bound of one population: the value itself, or its entry where bounds are per population."""
    return bound[population] if isinstance(bound, dict) else bound


def rate_problems(stats: list[dict], bounds: dict, duration_s: float | None = None) -> list[str]:
    """Silent and too active populations. A floor is judged only where the population's expected spike count
    at it (over `duration_s`) reaches the bounds' `min_floor_spikes` (snnbench.network.judging.activity_bounds)."""
    problems = []
    for row in stats:
        name, rate = row["population"], row["rate_hz"]
        floor, ceiling = at(bounds["min_rate_hz"], name), at(bounds["max_rate_hz"], name)
        countable = duration_s is None or floor * row["neurons"] * duration_s >= bounds.get("min_floor_spikes", 0)
        if rate < floor and countable:
            problems.append(f"{name} silent: {rate:.3g} spikes/s < {floor:.3g}")
        if rate > ceiling:
            problems.append(f"{name} too active: {rate:.3g} spikes/s > {ceiling:.3g}")
    return problems


def default(config: dict) -> dict:
    """The config's bounds, saying so."""
    return {**config, "source": "default", "basis": "the config's activity_check"}


def from_model(config: dict, facts: dict | None) -> dict:
    """Bounds from a model's rates (NetworkModel.activity_rates: `rates_hz` per population, `source`, and
    `upper_only` where they are an upper end, not rates: then the floor stays the config's). The config's
    `bounds_from_data: false` keeps its own bounds for every model."""
    if not facts or not facts.get("rates_hz") or not config.get("bounds_from_data", True):
        return default(config)
    rates = facts["rates_hz"]
    highest, lowest = max(rates, key=rates.get), min(rates, key=rates.get)
    bounds = {**config, "source": "model", "max_rate_hz": CEILING_FACTOR * rates[highest]}
    basis = f"{facts['source']}: ceiling {CEILING_FACTOR:g} x {rates[highest]:.3g} spikes/s ({highest})"
    if facts.get("upper_only"):
        basis += f", floor the config's {config['min_rate_hz']:g}"
    else:
        bounds["min_rate_hz"] = rates[lowest] / SILENCE_FACTOR
        bounds["min_floor_spikes"] = MIN_FLOOR_SPIKES
        basis += f", floor {rates[lowest]:.3g} ({lowest}) / {SILENCE_FACTOR:g}"
    return {**bounds, "basis": basis}


def ensemble_problems(model: dict, members: list[list[dict]], duration_s: float, published: tuple | None) -> list:
    """What makes a reference ensemble unfit to set bounds: a member implausible under the model's bounds, or
    (where the model publishes rates for the size) the members' mean rate of a population more than
    `reference_max_rel_deviation` from the published one."""
    problems = []
    for i, stats in enumerate(members):
        problems += [f"member {i}: {p}" for p in rate_problems(stats, model, duration_s)]
    if published is not None and members:
        rates, source = published
        for name, reference in rates.items():
            mean = float(np.mean([row["rate_hz"] for stats in members for row in stats if row["population"] == name]))
            if abs(mean - reference) / reference > model["reference_max_rel_deviation"]:
                problems.append(f"{name} mean {mean:.3g} spikes/s vs {reference:.3g} published ({source})")
    return problems


def from_ensemble(model: dict, members: list[list[dict]], duration_s: float, published: tuple | None = None):
    """(bounds, problems of the ensemble): per population from the members' statistics (each a list of
    population rows, the point itself left out), or the model's `model` bounds where the ensemble has fewer
    than MIN_MEMBERS runs or is flagged (its problems returned)."""
    if len(members) < MIN_MEMBERS or not model.get("bounds_from_data", True):
        return model, []
    problems = ensemble_problems(model, members, duration_s, published)
    if problems:
        return {**model, "basis": model["basis"] + "; the reference ensemble flagged, not used"}, problems
    rows: dict[str, list[dict]] = {}
    for stats in members:
        for row in stats:
            rows.setdefault(row["population"], []).append(row)
    bounds = {key: {} for key in ("min_rate_hz", "max_rate_hz", "min_cv_isi", "max_cv_isi")}
    for name, runs in rows.items():
        rates = [row["rate_hz"] for row in runs]
        bounds["max_rate_hz"][name] = ENSEMBLE_MARGIN * max(rates)
        bounds["min_rate_hz"][name] = min(rates) / SILENCE_FACTOR
        cvs = [row["cv_isi"] for row in runs if row["cv_neurons"] >= model["min_neurons_for_cv"]]
        judged = len(cvs) == len(runs)
        bounds["min_cv_isi"][name] = min(cvs) / ENSEMBLE_MARGIN if judged else _scalar(model["min_cv_isi"], name)
        bounds["max_cv_isi"][name] = max(cvs) * ENSEMBLE_MARGIN if judged else _scalar(model["max_cv_isi"], name)
    basis = (
        f"reference ensemble of {len(members)} runs: per population ceiling {ENSEMBLE_MARGIN:g} x their highest rate, "
        f"floor their lowest / {SILENCE_FACTOR:g}, ISI CV within [lowest / {ENSEMBLE_MARGIN:g}, "
        f"highest x {ENSEMBLE_MARGIN:g}]"
    )
    resolved = {**model, **bounds, "source": "ensemble", "basis": basis, "min_floor_spikes": MIN_FLOOR_SPIKES}
    return resolved, []


def _scalar(value, name: str):
    return value[name] if isinstance(value, dict) else value
