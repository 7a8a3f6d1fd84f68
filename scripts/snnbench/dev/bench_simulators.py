"""Our NEST PD14 against INM-6's reference implementation, and PyNN on NEST against PyNEST."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import median

import numpy as np

from snnbench.dev.benchkit import (
    GOAL_RATIO,
    bench_config,
    child_env,
    interleaved_pairs,
    run_checked,
    run_simulate,
    verdict,
)
from snnbench.network import activity
from snnbench.network.judging import rate_agreement
from snnbench.network.models import pd14
from snnbench.network.phases import PHASES
from snnbench.planning.experiments import expand_points


def run_ours(spec: dict, tmp: Path) -> dict:
    """Our PD14 on NEST, bare: `python -m snnbench.network.run`, one fresh process."""
    rank, _ = run_simulate(spec, tmp / f"ours-seed{spec['seed']}")
    return {
        "total": sum(rank["phases_s"][p] for p in PHASES),
        "simulate": rank["phases_s"]["simulate"],
        "synapses": rank["local_synapses"],
    }


def run_reference(spec: dict, tmp: Path) -> dict:
    """INM-6's reference implementation with the same phases: `python -m snnbench.network.oracle`."""
    point = tmp / f"reference-seed{spec['seed']}"
    point.mkdir()
    model, threads = spec["model"], spec["resources"]["threads_per_rank"]
    out = point / "oracle.json"
    command = [sys.executable, "-m", "snnbench.network.oracle", model["neuron_scale"], model["indegree_scale"], threads]
    command += [spec["seed"], model["t_presim_ms"], model["t_sim_ms"], out]
    run_checked(command, point / "oracle.log", env=child_env(threads))
    result = json.loads(out.read_text())
    return {
        "total": result["phases_s"]["total"],
        "simulate": result["phases_s"]["simulate"],
        "synapses": result["num_synapses"],
    }


def bench_reference(config: dict, tmp: Path) -> list[str]:
    """2: ours vs the reference implementation, interleaved pairs with the same seed."""
    rows = []
    for i, spec in enumerate(expand_points(config["experiments"][0])):
        if i % 2 == 0:
            ours = run_ours(spec, tmp)
            ref = run_reference(spec, tmp)
        else:
            ref = run_reference(spec, tmp)
            ours = run_ours(spec, tmp)
        rows.append({"seed": spec["seed"], "first": "ours" if i % 2 == 0 else "ref", "ours": ours, "ref": ref})

    print("\n2. Our NEST PD14 vs reference (microcircuit), bare processes, interleaved pairs")
    print(
        f"{'seed':>6}  {'first':>5}  {'total ours s':>12}  {'total ref s':>11}  {'sim ours s':>10}  {'sim ref s':>9}  "
        f"{'synapses ours':>13}  {'synapses ref':>12}"
    )
    for r in rows:
        o, f = r["ours"], r["ref"]
        print(
            f"{r['seed']:>6}  {r['first']:>5}  {o['total']:>12.2f}  {f['total']:>11.2f}  {o['simulate']:>10.2f}  "
            f"{f['simulate']:>9.2f}  {o['synapses']:>13}  {f['synapses']:>12}"
        )
    med = {(who, key): median([r[who][key] for r in rows]) for who in ("ours", "ref") for key in ("total", "simulate")}
    print(
        f"{'median':>6}  {'':>5}  {med['ours', 'total']:>12.2f}  {med['ref', 'total']:>11.2f}  "
        f"{med['ours', 'simulate']:>10.2f}  {med['ref', 'simulate']:>9.2f}"
    )
    ratios = {key: med["ours", key] / med["ref", key] for key in ("total", "simulate")}
    print(f"ratio of medians ours/reference: total {ratios['total']:.3f}, simulate {ratios['simulate']:.3f}")
    differ = [r for r in rows if r["ours"]["synapses"] != r["ref"]["synapses"]]
    if differ:
        print(
            "NOTE: synapse counts differ for seed(s) "
            + ", ".join(f"{r['seed']} (ours {r['ours']['synapses']}, ref {r['ref']['synapses']})" for r in differ)
            + ": the networks are not the same size, so the timings do not compare like with like"
        )
    else:
        print(f"synapse counts equal in every pair ({rows[0]['ours']['synapses']})")
    return [
        f"{verdict(ratios[key] <= GOAL_RATIO)}  ours/reference {key}: ratio of medians {ratios[key]:.3f} "
        f"(goal <= {GOAL_RATIO:g})"
        for key in ("total", "simulate")
    ] + ([f"MISS  synapse counts differ in {len(differ)} of {len(rows)} pairs"] if differ else [])


def run_front_end(spec: dict, tmp: Path) -> dict:
    """One bare point of `nest` or `pynn-nest`: phase times, synapse count and population rates."""
    rank, out = run_simulate(spec, tmp / f"{spec['simulator']}-seed{spec['seed']}")
    model = spec["model"]
    spikes = np.load(out / "rank0.npz")
    net = pd14.derive(model["neuron_scale"], model["indegree_scale"], model["input"])
    stats = activity.population_stats(
        spikes["senders"],
        spikes["times_ms"],
        rank["population_first_ids"],
        net.num_neurons.tolist(),
        model["t_sim_ms"],
        pd14.POPULATIONS,
    )
    phases = dict(rank["phases_s"], total=sum(rank["phases_s"][p] for p in PHASES))
    return {"phases": phases, "synapses": rank["local_synapses"], "rates": [row["rate_hz"] for row in stats]}


def bench_pynn(args: argparse.Namespace, tmp: Path) -> list[str]:
    """3: PyNN on NEST vs PyNEST, interleaved pairs with the same seed, per phase."""
    simulators = ("nest", "pynn-nest")
    specs = expand_points(bench_config(args, simulators=simulators)["experiments"][0])
    rows = interleaved_pairs(specs, simulators, lambda spec: run_front_end(spec, tmp))

    print("\n3. PyNN on NEST vs PyNEST, bare processes, interleaved pairs (same seed within a pair)")
    print(
        f"{'seed':>6}  {'first':>9}  " + "  ".join(f"{p:>11}" for p in (*PHASES, "total")) + "  (s, nest / pynn-nest)"
    )
    for r in rows:
        cells = [f"{r['nest']['phases'][p]:>5.2f}/{r['pynn-nest']['phases'][p]:<5.2f}" for p in (*PHASES, "total")]
        print(f"{r['seed']:>6}  {r['first']:>9}  " + "  ".join(cells))
    print(f"\n{'phase':>12}  {'PyNEST s':>9}  {'PyNN s':>9}  {'PyNN/PyNEST':>11}  (medians over {len(rows)} seed(s))")
    for phase in (*PHASES, "total"):
        native = median([r["nest"]["phases"][phase] for r in rows])
        pynn = median([r["pynn-nest"]["phases"][phase] for r in rows])
        ratio = f"{pynn / native:>11.2f}" if native > 0 else f"{'-':>11}"
        print(f"{phase:>12}  {native:>9.3f}  {pynn:>9.3f}  {ratio}")
    print("PyNN has no separate prepare step: NEST's preparation happens inside its first run (presimulate).")

    print(f"\n{'seed':>6}  {'synapses PyNEST':>15}  {'synapses PyNN':>13}")
    for r in rows:
        print(f"{r['seed']:>6}  {r['nest']['synapses']:>15}  {r['pynn-nest']['synapses']:>13}")
    same_synapses = all(r["nest"]["synapses"] == r["pynn-nest"]["synapses"] for r in rows)

    rates = {who: np.array([r[who]["rates"] for r in rows]) for who in ("nest", "pynn-nest")}
    agreement = rate_agreement.rates_agree(rates["nest"], rates["pynn-nest"])
    difference, spread = agreement["difference"], agreement["spread"]
    print(f"\n{'population':>10}  {'PyNEST Hz':>9}  {'PyNN Hz':>9}  {'|diff|':>7}  {'spread':>7}")
    for j, name in enumerate(pd14.POPULATIONS):
        print(
            f"{name:>10}  {rates['nest'][:, j].mean():>9.3f}  {rates['pynn-nest'][:, j].mean():>9.3f}  "
            f"{difference[j]:>7.3f}  {spread[j]:>7.3f}"
        )
    rates_ok = bool(np.all(agreement["agrees"]))
    note = "" if len(rows) > 1 else " (one seed: no spread to compare with; use --reps 2 or more)"
    return [
        f"{verdict(same_synapses)}  PyNN/PyNEST synapse counts equal in every pair",
        f"{verdict(rates_ok)}  PyNN/PyNEST rates within 2 x seed-to-seed spread + 2 %{note}",
    ]
