"""Full-scale PD14 on one machine, summarised: `make bench-full-scale` runs
config/experiments/full-scale-local.yaml through the workflow (profiles/local), then

    .venv/bin/python -m snnbench.dev.full_scale [WORKDIR]   (the workflow's folder; default: here)

prints, for each point of that experiment: synapses (counted against expected), peak memory per
rank and in all (each rank's VmHWM) against the memory estimate the point asks SLURM for
(snnbench.network.models.pd14.estimate_mem_mb, per node, times the nodes), construction and simulation
times, the real-time factor, and each population's rate against the published full-scale rates
(snnbench.network.models.pd14.REFERENCE_RATES_HZ).
"""

from __future__ import annotations

import sys
from pathlib import Path

from snnbench import planning
from snnbench.jsonfile import read_json
from snnbench.network.models import pd14
from snnbench.network.models.pd14 import estimate_mem_mb

REPO = Path(__file__).resolve().parents[3]
EXPERIMENT_FILE = REPO / "config/experiments/full-scale-local.yaml"


def summary(rec: dict) -> list[str]:
    spec, net, mem = rec["point"], rec["network"], rec["memory"]
    res = spec["resources"]
    lines = [f"{spec['path']}: {rec['status']}" + (f" ({rec['failure']['reason']})" if rec["failure"] else "")]
    if rec["status"] != "ok":
        return lines
    estimate = estimate_mem_mb(spec) * res["nodes"]
    peak = mem["peak_rss_mb_sum"]
    ranks = ", ".join(f"rank {r['rank']} {r['peak_rss_mb'] / 1e3:.2f}" for r in rec["ranks"])
    phases = rec["phases_s"]
    lines += [
        f"  shape: {res['nodes']} node(s) x {res['ranks_per_node']} ranks x {res['threads_per_rank']} threads; "
        f"t_presim {spec['model']['t_presim_ms']:g} ms, t_sim {spec['model']['t_sim_ms']:g} ms, seed {spec['seed']}",
        f"  synapses: {net['num_synapses']:,} (expected {net['expected_synapses']:,})",
        f"  peak memory (GB): {ranks}; total {peak / 1e3:.2f}",
        f"  memory estimate sent to SLURM: {estimate / 1e3:.2f} GB = {estimate / peak:.2f} x measured peak "
        "(goal: 1.00 to 1.25)",
        f"  construction: {phases['create'] + phases['connect']:.1f} s (create {phases['create']:.1f}, "
        f"connect {phases['connect']:.1f}; setup {phases['setup']:.1f}, prepare {phases['prepare']:.1f}); "
        f"presimulation {phases['presimulate']:.1f} s; "
        f"simulation {phases['simulate']:.1f} s; record wall time {rec['wall_time_s']:.1f} s",
        f"  real-time factor: {rec['real_time_factor']:.1f}",
        f"  activity: {'plausible' if rec['activity']['plausible'] else rec['activity']['problems']}",
        f"  {'population':<10} {'rate Hz':>8} {'published':>9} {'diff':>7}",
    ]
    published = dict(zip(pd14.POPULATIONS, pd14.FULL_MEAN_RATES_HZ.tolist(), strict=True))
    for pop in rec["populations"]:
        ref = published[pop["population"]]
        lines.append(
            f"  {pop['population']:<10} {pop['rate_hz']:8.3f} {ref:9.3f} {100 * (pop['rate_hz'] / ref - 1):+6.1f}%"
        )
    return lines


def main(argv: list[str]) -> None:
    workdir = Path(argv[0]) if argv else Path.cwd()
    campaign = planning.plan_files([EXPERIMENT_FILE])
    for experiment in campaign.experiments:
        for path in campaign.points_of(experiment):
            path = workdir / path / "record.json"
            print("\n".join(summary(read_json(path))) if path.exists() else f"{path}: no record (run the workflow)")


if __name__ == "__main__":
    main(sys.argv[1:])
