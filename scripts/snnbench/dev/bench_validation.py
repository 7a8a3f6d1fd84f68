"""`make bench-validation`: how often validation rejects a correct run (false positives) and how large a
change of the network it catches (power), measured with real runs of PD14 (or hpc_benchmark: `--model`) on NEST.

A reference ensemble of `--seeds` NEST runs at one model size, and `--changed-seeds` runs of each deliberately
changed network (pd14.perturbation: all weights x f, delays + 1 step, L4E's in-degrees x f). False positives:
each reference seed judged against the others (leave-one-out, snnbench.network.judging.ensemble) and `--second-seeds`
runs of a second correct simulator (SECOND) judged against the whole ensemble; power: each changed run judged
against the whole ensemble. Both for the spike statistics (validation verdict at the config's `validation.alpha`) and
for the population rates (ensemble.rates_agree of one run against the ensemble). Runs are kept in --out and
reused, so a second call only judges again.

Groups (PD14): a pool of `--pool-seeds` fresh NEST seeds (not in the ensemble) judged one by one against the
whole ensemble (per-run false positives), and `--groups` groups of `--group-size` drawn from it judged as a group
by the workflow's simulator verdict (snnbench.network.judging.group_verdict; its false positives); `--bug-seeds` runs of
each of BUGS, one by one and in groups (power).

    python -m snnbench.dev.bench_validation --neuron-scale 0.05 --seeds 20 --out results/bench-validation
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from snnbench import planning
from snnbench.dev import delay_bugs, validation_groups
from snnbench.jsonfile import read_json
from snnbench.network import activity, execute, models, validation
from snnbench.network.judging import ensemble, group_verdict, rate_agreement, validity
from snnbench.network.simulators import EXTRA_VARIABLE
from snnbench.tables.frames import read_points

CHANGES = {  # pd14.perturbation
    "weights x1.02": {"weight_scale": 1.02},
    "weights x1.05": {"weight_scale": 1.05},
    "weights x1.1": {"weight_scale": 1.1},
    "weights x1.2": {"weight_scale": 1.2},
    "delays +1 step": {"delay_steps": 1},
    "L4E in-degree x0.9": {"population_indegree": {"population": "L4E", "scale": 0.9}},
    "L4E in-degree x0.8": {"population_indegree": {"population": "L4E", "scale": 0.8}},
}
# hpc_benchmark.perturbation: the relative inhibition g
HPC_CHANGES = {
    "inhibition x0.95": {"inhibition_scale": 0.95},
    "inhibition x0.9": {"inhibition_scale": 0.9},
    "inhibition x0.8": {"inhibition_scale": 0.8},
}

# A second correct simulator judged against the NEST ensemble (its false positives): PyGeNN's CPU backend in
# double precision. Not its iaf_psc_exp neuron: that one reads NEST's exported network with DC input, whose
# seeds do not vary (no Poisson input), so it has no ensemble to be judged against.
SECOND = {"simulator": "genn-cpu", "genn": {"precision": "double"}}
SPLITS = 500  # random halves of the reference seeds whose seed means are compared (judge_tables)
# The bugs whose groups the simulator verdict should find (PD14): a drive, a coupling and a dynamics change.
BUGS = {
    "background +2.5%": {"perturbation": {"background_rate_scale": 1.025}},
    "weights x1.05": {"perturbation": {"weight_scale": 1.05}},
    "slow inhibition": {"simulator": delay_bugs.SlowInhibitionBackend.name},
    "fast excitation": {"simulator": delay_bugs.FastExcitationBackend.name},
}
POOL_FIRST_SEED = 1001  # fresh seeds: above any ensemble's
BUG_FIRST_SEED = 2001


def point_config(
    args, seed: int, change: dict | None, second: bool = False, simulator: str = "nest"
) -> tuple[dict, dict]:
    """A validated one-point config (defaults filled in as the workflow does) and its spec: NEST (or
    `simulator`), or the second simulator."""
    model = {
        "neuron_scale": args.neuron_scale,
        "indegree_scale": args.indegree_scale,
        "t_presim_ms": args.t_presim_ms,
        "t_sim_ms": args.t_sim_ms,
    }
    if change:
        model["perturbation"] = change
    exp = {
        "name": "bench-validation",
        "simulators": [SECOND["simulator"] if second else simulator],
        **({"genn": SECOND["genn"]} if second else {}),
        "scaling": "strong",
        "resources": {"threads_per_rank": [1]},
        **({"model": args.model} if args.model != "pd14" else {}),
        args.model: model,
        "seeds": [seed],
    }
    config = {"experiments": [exp]}
    planning.plan(config)
    return config, planning.expand_points(config["experiments"][0])[0]


def run(args, seed: int, name: str, change: dict | None, simulator: str = "nest") -> Path:
    """One point's record, spikes and statistics (stats.npz) in out/<name>/seed<seed>, run once."""
    folder = Path(args.out) / name.replace(" ", "_").replace("+", "p").replace("%", "pc") / f"seed{seed}"
    if (folder / "stats.npz").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    config, spec = point_config(args, seed, change, second=name == SECOND["simulator"], simulator=simulator)
    (folder / "spec.json").write_text(json.dumps(spec))
    files = [folder / name for name in ("spec.json", "record.json", "spikes.npz", "log")]
    execute.run_point(*files, 1800)
    settings = {k: config["validation"][k] for k in ("neurons_per_population", "bin_ms", "min_spikes_for_cv")}
    # The spikes stay (76 kB at PD14 N = K = 0.1, 1 s): a change of the statistics is measured again without a rerun.
    validation.point_statistics(folder / "record.json", folder / "spikes.npz", folder / "stats.npz", settings)
    return folder


def rates(folder: Path) -> np.ndarray:
    rec = read_json(folder / "record.json")
    rate = {row["population"]: row["rate_hz"] for row in rec["populations"]}
    return np.array([rate[p] for p in models.get(rec["point"]["model_name"]).populations])


def flagged(point: dict, members: list[dict], self_index, tolerance: dict, min_samples: int, whole=None) -> bool:
    """Whether the per-point rule flags a run; with `whole` (the run's and the members' record populations,
    `populations`), as it would on every neuron's rates and ISI CVs (`with_every_neuron`)."""
    rows = validation.compare(point, None, [], min_samples, members, self_index)
    if whole is not None:
        rows = with_every_neuron(rows, *whole)
    return not validity.judge_point({"checked": True, "rows": rows}, tolerance)["validation_passed"]


def flagger(runs: list[dict], tolerance: dict, min_samples: int):
    """flags(run, members): whether the per-point rule flags runs[run] against the runs[m] of members."""
    return lambda run, members: flagged(runs[run], [runs[m] for m in members], None, tolerance, min_samples)


def populations(folder: Path) -> dict[str, dict]:
    """A run's record populations by name: every neuron's spike statistics."""
    return {row["population"]: row for row in read_json(folder / "record.json")["populations"]}


def with_every_neuron(rows: list[dict], mine: dict, members: list[dict]) -> list[dict]:
    """The rows with the run's and the members' means of every neuron's rates and ISI CVs (their records) in place
    of the subsample's, judged on the log scale (a record holds no standard errors for the generalized log):
    what the per-point rule would say on every neuron (issue 52), measured beside what it says."""
    fields = {statistic: activity.TABLE_COLUMNS[statistic][1] for statistic in group_verdict.WHOLE_POPULATION}
    changed = []
    for row in rows:
        field, population = fields.get(row["statistic"]), row["population"]
        if field is not None:
            row = {k: v for k, v in row.items() if k != "ensemble_sems"}
            row["mean"] = mine[population][field]
            row["ensemble_means"] = [member[population][field] for member in members]
        changed.append(row)
    return changed


def judging(args, reference: list[Path]) -> tuple[dict, int, list[dict]]:
    """What a run is judged by: the config's tolerances, its minimum sample and the reference seeds' statistics."""
    config, _ = point_config(args, 1, None)
    tolerance = {k: config["validation"][k] for k in ("alpha", "ks_alpha", "ks_margin")}
    members = [validation.load(f / "stats.npz")[0] for f in reference]
    return tolerance, config["validation"]["min_samples"], members


def judge(reference: list[Path], changed: dict[str, list[Path]], judged_by: tuple) -> list[dict]:
    """One line per judged set: runs judged, share flagged by the statistics, share whose rates differ
    (judged_by: judging())."""
    tolerance, min_samples, members = judged_by
    ref_rates = np.array([rates(f) for f in reference])
    lines = []
    fp = [flagged(m, members, j, tolerance, min_samples) for j, m in enumerate(members)]
    fp_rates = [
        not ensemble.rates_agree(np.delete(ref_rates, j, axis=0), ref_rates[j : j + 1], tolerance["alpha"])[
            "agrees"
        ].all()
        for j in range(len(reference))
    ]
    lines.append(
        {
            "runs": "reference seeds (leave-one-out)",
            "n": len(fp),
            "statistics": fp,
            "rates": fp_rates,
            "seed_means": seed_means_differ(ref_rates),
        }
    )
    for name, folders in changed.items():  # the second simulator's runs: a false positive where flagged
        stats = [validation.load(f / "stats.npz")[0] for f in folders]
        found = [flagged(s, members, None, tolerance, min_samples) for s in stats]
        runs = np.array([rates(f) for f in folders])
        differ = [not ensemble.rates_agree(ref_rates, run[None, :], tolerance["alpha"])["agrees"].all() for run in runs]
        means = seed_means_differ(ref_rates, runs)
        lines.append({"runs": name, "n": len(found), "statistics": found, "rates": differ, "seed_means": means})
    return lines


def seed_means_differ(reference: np.ndarray, other: np.ndarray | None = None) -> list[bool]:
    """Whether the seed means of `other` (runs x populations) differ from the reference's (ensemble.rates_agree, the
    rule of rates_agree_with_<reference>); without `other`, for SPLITS random halves of the reference's seeds."""
    if other is not None:
        return [not ensemble.rates_agree(reference, other)["agrees"].all()]
    halves = [np.random.default_rng(k).permutation(len(reference)) for k in range(SPLITS)]
    return [
        not ensemble.rates_agree(reference[h[: len(h) // 2]], reference[h[len(h) // 2 :]])["agrees"].all()
        for h in halves
    ]


def judge_tables(tables: list[Path]) -> list[dict]:
    """judge's lines from the workflow's tables (the multi-area model's, make bench-validation): the experiments'
    points and their shared reference ensemble's table (named by the points' `validation_reference_point`), each
    reference seed leave-one-out. Statistics: the collected verdict (validation_passed); rates: each run's against
    the reference seeds, as `judge` does; invalid: the table's `valid` (validation and activity checks); seed means:
    whether the runs' seed means differ from the reference seeds' (ensemble.rates_agree, the rule of
    rates_agree_with_<reference>), for the reference itself over SPLITS random halves of its seeds."""
    frames = [read_points(path) for path in tables]
    named = {str(p).split("/")[1] for f in frames for p in f["validation_reference_point"].dropna()}
    frames = [read_points(Path("results") / name / "points.csv") for name in sorted(named)] + frames
    reference = rate_agreement.reference_of(frames[0])
    finished = [f[f["status"] == "ok"] for f in frames]
    members = pd.concat([f[f["simulator"] == reference] for f in finished[: len(named)]])
    columns = rate_agreement.rate_columns(members)
    lines = []
    for frame in finished:
        mine = frame["simulator"] == reference
        differ = []
        for path, row in zip(frame["path"], frame[columns].to_numpy(dtype=float), strict=True):
            others = members.loc[members["path"] != path, columns].to_numpy(dtype=float)  # leave-one-out
            differ.append(not ensemble.rates_agree(others, row[None, :])["agrees"].all())
        rates = frame[columns].to_numpy(dtype=float)
        means_differ = (
            seed_means_differ(rates) if mine.all() else seed_means_differ(members[columns].to_numpy(float), rates)
        )
        name = f"{frame['experiment'].iloc[0]} ({', '.join(dict.fromkeys(frame['simulator']))})"
        lines.append(
            {
                "runs": name + (", leave-one-out" if mine.all() else ""),
                "n": len(frame),
                "statistics": list(frame["validation_passed"] == False),  # noqa: E712 (NaN: not judged)
                "rates": differ,
                "invalid": list(~frame["valid"].astype(bool)),
                "seed_means": means_differ,
            }
        )
    return lines


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="pd14", choices=["pd14", "hpc_benchmark"])
    parser.add_argument("--neuron-scale", type=float, default=0.05)
    parser.add_argument("--indegree-scale", type=float, default=0.1)
    parser.add_argument("--t-presim-ms", type=float, default=100.0)
    parser.add_argument("--t-sim-ms", type=float, default=500.0)
    parser.add_argument("--seeds", type=int, default=20, help="reference ensemble size (leave-one-out judgements)")
    parser.add_argument("--changed-seeds", type=int, default=10, help="runs of each changed network")
    known = f"{', '.join(CHANGES)} (pd14) or {', '.join(HPC_CHANGES)} (hpc_benchmark)"
    parser.add_argument("--changes", help=f"which of: {known}; default: all of the model's; none: none")
    parser.add_argument("--second-seeds", type=int, default=10, help=f"runs of {SECOND['simulator']} (0: none)")
    parser.add_argument("--pool-seeds", type=int, default=100, help="fresh NEST seeds for the groups (pd14; 0: none)")
    parser.add_argument("--bug-seeds", type=int, default=20, help="runs of each bug for the groups (pd14)")
    parser.add_argument("--bugs", help=f"which of: {', '.join(BUGS)}; default: all; none: none")
    parser.add_argument("--groups", type=int, default=20, help="groups drawn from the pool and from each bug's runs")
    parser.add_argument("--group-size", type=int, default=10)
    parser.add_argument(
        "--other-references", type=int, default=30, help="references drawn anew from the ensemble and the pool"
    )
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (one thread each)")
    parser.add_argument("--out", default="results/bench-validation")
    parser.add_argument("--tables", nargs="+", type=Path, help="judge the workflow's points.csv tables instead")
    return parser.parse_args(argv)


def chosen(names: str | None, known) -> list[str]:
    """Comma-separated names out of `known`; unset: all of them; "none": none."""
    return [n.strip() for n in (names or ",".join(known)).split(",") if n.strip() not in ("", "none")]


def tasks_of(args) -> tuple[list[tuple], list[str]]:
    """(seed, name, perturbation, simulator) of every run, and the names judged as groups."""
    pd14 = args.model == "pd14"
    changes = CHANGES if pd14 else HPC_CHANGES
    second_seeds = args.second_seeds if pd14 else 0  # its config is PD14's (genn-cpu builds PD14)
    bugs = chosen(args.bugs, BUGS) if pd14 else []
    tasks = [(seed, "reference", None, "nest") for seed in range(1, args.seeds + 1)]
    tasks += [(seed, SECOND["simulator"], None, "nest") for seed in range(1, second_seeds + 1)]
    tasks += [
        (s, name, changes[name], "nest")
        for name in chosen(args.changes, changes)
        for s in range(1, args.changed_seeds + 1)
    ]
    tasks += [(POOL_FIRST_SEED + k, "pool", None, "nest") for k in range(args.pool_seeds if pd14 else 0)]
    for name in bugs:
        simulator = BUGS[name].get("simulator", "nest")
        tasks += [(BUG_FIRST_SEED + k, name, BUGS[name].get("perturbation"), simulator) for k in range(args.bug_seeds)]
    return tasks, ["pool", *bugs]


def print_tables(tables: list[Path]) -> None:
    keys = ("statistics", "rates", "invalid", "seed_means")
    print(f"{'runs judged':64s} {'n':>3s}  flagged (statistics)  rates differ  invalid  seed means differ")
    for line in judge_tables(tables):
        shares = [np.mean(line[key]) for key in keys]
        print(
            f"{line['runs']:64s} {line['n']:3d}  {shares[0]:20.0%}  {shares[1]:12.0%}  {shares[2]:7.0%}  "
            f"{shares[3]:17.0%}" + (f" of {SPLITS} halves" if len(line["seed_means"]) > 1 else "")
        )


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.tables:
        print_tables(args.tables)
        return
    started = time.monotonic()
    # The dynamics bugs are simulators of their own: registered for the plan here and for the runs it starts.
    os.environ[EXTRA_VARIABLE] = ",".join(filter(None, [os.environ.get(EXTRA_VARIABLE), delay_bugs.REGISTRY]))
    tasks, group_names = tasks_of(args)
    with ProcessPoolExecutor(args.jobs) as pool:  # processes: a run supervises its child with signals
        folders = list(pool.map(run, [args] * len(tasks), *zip(*tasks, strict=True)))
    runs: dict[str, list[Path]] = {}  # in the tasks' order: the second simulator first, then the changes
    for (_, name, _, _), folder in zip(tasks, folders, strict=True):
        runs.setdefault(name, []).append(folder)
    reference = runs.pop("reference")
    grouped = {name: runs.pop(name) for name in group_names if name in runs}
    changed = {f"{name} (correct)" if name == SECOND["simulator"] else name: found for name, found in runs.items()}
    print(
        f"{args.model} on NEST, N = {args.neuron_scale:g}, K = {args.indegree_scale:g}, {args.t_sim_ms:g} ms after "
        f"{args.t_presim_ms:g} ms, ensemble of {args.seeds} seeds"
    )
    print(f"{'runs judged':34s} {'n':>3s}  {'flagged (spike statistics)':>27s}  rates differ  seed means differ")
    judged_by = judging(args, reference)
    for line in judge(reference, changed, judged_by):
        shares = [np.mean(line[key]) for key in ("statistics", "rates", "seed_means")]
        halves = f" of {SPLITS} halves" if len(line["seed_means"]) > 1 else ""
        print(f"{line['runs']:34s} {line['n']:3d}  {shares[0]:27.0%}  {shares[1]:12.0%}  {shares[2]:17.0%}{halves}")
    if grouped:
        print_groups(args, reference, grouped, judged_by)
    print(f"wall time {time.monotonic() - started:.0f} s ({len(tasks)} runs, those on disk reused)")


def print_groups(args, reference: list[Path], grouped: dict[str, list[Path]], judged_by: tuple) -> None:
    """Per-run flags and the simulator verdict of drawn groups against the reference seeds' runs (judged_by:
    judging()): the fresh pool (false positives) and each bug."""
    tolerance, min_samples, members = judged_by
    reference_whole = [populations(f) for f in reference]
    wide_reference = validation_groups.features(members, reference_whole, min_samples)
    print(
        f"\nsimulator verdict (alpha {group_verdict.ALPHA}): groups of {args.group_size} "
        f"against the {len(reference)} ensemble seeds"
    )
    print(
        f"{'runs':32s} {'n':>3s}  flagged one by one (every neuron's rates, CVs)  groups differ  median p  named most"
    )
    by_rule = [flagged(m, members, j, tolerance, min_samples) for j, m in enumerate(members)]
    every = [
        flagged(m, members, j, tolerance, min_samples, (reference_whole[j], reference_whole))
        for j, m in enumerate(members)
    ]
    print_flags("reference seeds, leave-one-out", by_rule, every)
    for name, folders in grouped.items():
        stats = [validation.load(f / "stats.npz")[0] for f in folders]
        whole = [populations(f) for f in folders]
        flags = [flagged(point, members, None, tolerance, min_samples) for point in stats]
        every = [
            flagged(point, members, None, tolerance, min_samples, (mine, reference_whole))
            for point, mine in zip(stats, whole, strict=True)
        ]
        wide = validation_groups.features(stats, whole, min_samples)
        found = validation_groups.summary(
            validation_groups.verdicts(wide, wide_reference, args.groups, args.group_size)
        )
        print_flags("fresh NEST seeds" if name == "pool" else name, flags, every, found)
        if name == "pool" and args.other_references:
            flags = flagger(members + stats, tolerance, min_samples)  # in the order other_references draws from
            validation_groups.print_other_references(wide_reference, wide, flags, args)


def print_flags(label: str, flags, every, found: dict | None = None) -> None:
    """One line of the groups' table: runs flagged one by one (by the rule; as it would on every neuron's rates and
    CVs) and, for a drawn set, its groups' verdicts."""
    line = f"{label:32s} {len(flags):3d}  {sum(flags):6d} / {len(flags):<3d}  {sum(every):6d} / {len(every):<3d}"
    if found is not None:
        line += f"  {found['differ']:8d} / {found['groups']:<3d}  {found['median_p']:8.4f}  {found['named']}"
    print(line)


if __name__ == "__main__":
    main()
