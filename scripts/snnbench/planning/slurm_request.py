"""What a point's SLURM job asks for beyond its shape (config `slurm:`: exclusive, threads_per_core,
extra), as flags for snakemake-executor-plugin-slurm's `slurm_extra` resource; and, before any job,
the points that no node of their partition can hold as asked (sinfo), refused in one line each
instead of submitted (SLURM would refuse them, or a site's SLURM leave them pending).

What the job then got is read back inside it (snnbench.records.slurm_grant).
"""

from __future__ import annotations

import math
import re
import shlex
import subprocess

from snnbench import families

# Flags the keys own: one source for each (a site's `extra` must not say them again, differently).
OWNED = {
    "--exclusive": "exclusive",
    "--oversubscribe": "exclusive",
    "-s": "exclusive",
    "--share": "exclusive",
    "--threads-per-core": "threads_per_core",
    "--hint": "threads_per_core",
    "--ntasks-per-core": "threads_per_core",
}
SINFO_TIMEOUT_S = 30


def settings(config: dict, experiment: dict) -> dict:
    """The experiment's `slurm:` block over the config's, key by key."""
    return {**config.get("slurm", {}), **experiment.get("slurm", {})}


def asked(config: dict, experiment: dict) -> dict:
    """What the experiment's points ask beyond their shape: whole nodes (default: their family's,
    snnbench.run.family.Family.slurm_exclusive), at most this many threads per core (None: the
    site's default) and the site's own flags."""
    chosen = settings(config, experiment)
    return {
        "exclusive": chosen.get("exclusive", families.of_experiment(experiment).slurm_exclusive),
        "threads_per_core": chosen.get("threads_per_core"),
        "extra": chosen.get("extra", ""),
    }


def sbatch_flags(request: dict) -> str:
    """asked()'s request as sbatch flags. --threads-per-core, not --hint=nomultithread: SLURM takes
    --hint with neither --threads-per-core nor srun's --cpu-bind, which the network points' ranks use."""
    flags = ["--exclusive"] if request["exclusive"] else []
    if request["threads_per_core"]:
        flags.append(f"--threads-per-core={request['threads_per_core']}")
    return " ".join([*flags, request["extra"]]).strip()


def problems(config: dict) -> list[str]:
    """`extra` flags that the executor plugin sets itself or that a key of `slurm:` owns, one line each."""
    blocks = [("slurm", config.get("slurm", {}))]
    blocks += [
        (f"experiments[{i}] ({e['name']}): slurm", e["slurm"])
        for i, e in enumerate(config["experiments"])
        if "slurm" in e
    ]
    found = []
    for where, block in blocks:
        extra = block.get("extra", "")
        try:
            words = shlex.split(extra)
        except ValueError as error:
            found.append(f"{where}.extra: {error}: {extra!r}")
            continue
        for word in words:
            flag = word.split("=", 1)[0]
            if flag in OWNED:
                found.append(f"{where}.extra: {flag} is set by the key slurm.{OWNED[flag]}, not by extra")
        if (plugin := _plugin_refusal(extra)) is not None:
            found.append(f"{where}.extra: {plugin}")
    return found


def _plugin_refusal(extra: str) -> str | None:
    """What snakemake-executor-plugin-slurm would refuse in slurm_extra at submission (its own list)."""
    if not extra:
        return None
    try:
        from snakemake_executor_plugin_slurm.validation import get_forbidden_slurm_options
    except ImportError:  # not installed here (a local run): its jobs never see the flags
        return None
    for pattern, name in get_forbidden_slurm_options().items():
        if re.search(pattern, extra):
            return f"the executor plugin sets the {name} itself (a resource of the execute rule), not extra"
    return None


def partition_nodes(run=subprocess.run) -> list[dict] | None:
    """Every node of every partition (sinfo): partition (default marked), CPUs, sockets, cores per
    socket, threads per core; None where sinfo cannot tell (not a SLURM host)."""
    try:
        out = run(
            ["sinfo", "-h", "-N", "-o", "%P|%N|%c|%X|%Y|%Z"], capture_output=True, text=True, timeout=SINFO_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    nodes = []
    for line in out.stdout.splitlines():
        partition, name, *numbers = line.strip().split("|")
        try:
            cpus, sockets, cores, threads = (int(n) for n in numbers)
        except ValueError:  # a node whose topology sinfo does not give
            continue
        default = partition.endswith("*")
        nodes.append(
            dict(
                partition=partition.rstrip("*"),
                default=default,
                node=name,
                cpus=cpus,
                sockets=sockets,
                cores=cores,
                threads=threads,
            )
        )
    return nodes


def usable_cpus(node: dict, threads_per_core: int | None) -> int:
    """The CPUs of the node that a job may use at that many threads per core (None: every one)."""
    if not threads_per_core:
        return node["cpus"]
    return min(node["cpus"], node["sockets"] * node["cores"] * min(threads_per_core, node["threads"]))


def unplaceable(points: dict[str, dict], config: dict, experiments: dict, nodes: list[dict]) -> list[str]:
    """One line per point that too few nodes of its partition(s) can hold: its ranks per node x
    threads per rank more than a node's usable CPUs (at the threads per core it asks)."""
    found = []
    for path, spec in points.items():
        experiment = experiments[spec["experiment"]]
        threads, chosen = asked(config, experiment)["threads_per_core"], settings(config, experiment)
        res = families.of_experiment(experiment).resources(spec, config)
        per_node = (res["tasks_per_node"] or math.ceil((res["tasks"] or 1) / res["nodes"])) * res["cpus_per_task"]
        names = chosen["partition"].split(",") if chosen.get("partition") else None
        candidates = [n for n in nodes if (n["partition"] in names if names else n["default"])]
        if not candidates:
            continue  # a partition sinfo does not show here (another cluster's): SLURM judges
        fitting = {n["node"] for n in candidates if usable_cpus(n, threads) >= per_node}
        if len(fitting) >= res["nodes"]:
            continue
        best = max(candidates, key=lambda n: usable_cpus(n, threads))
        at = f" at {threads} thread(s) per core (slurm.threads_per_core)" if threads else ""
        partition = ",".join(names) if names else f"{best['partition']} (the default)"
        found.append(
            f"{path}: needs {per_node} CPUs on each of {res['nodes']} node(s){at}, but partition {partition} has "
            f"{len(fitting)} such node(s): the largest, {best['node']}, has {usable_cpus(best, threads)} usable "
            f"({best['sockets']} socket(s) x {best['cores']} core(s) x {best['threads']} thread(s), sinfo)"
        )
    return found
