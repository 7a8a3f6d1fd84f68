"""Binding a point's ranks and threads to cores (the experiment's `binding`, by default the config's
top-level `binding`), and what the run got.

`cores`: one thread per core, a rank's threads on neighbouring cores, each rank on cores of its own
(what NEST's documentation and beNNch's job scripts ask for: docs/binding.md). `none`: the operating
system places and moves threads. The same meaning under every launcher:

- OpenMP threads (NEST's; Brian2's cpp_standalone): OMP_PROC_BIND=close and OMP_PLACES=cores, or
  OMP_PROC_BIND=false; placement variables of the site or the user (OMP_PLACES, GOMP_CPU_AFFINITY,
  KMP_AFFINITY) are replaced, so that nothing binds behind the setting's back.
- Ranks started by Open MPI's mpirun (profiles/local): `--map-by slot:PE=<threads> --bind-to core`,
  or `--bind-to none`.
- Ranks started by srun inside a SLURM job (profiles/slurm): `--cpu-bind=cores` or `--cpu-bind=none`;
  a one-rank point that asks for cores runs as a step of its own with `--cpu-bind=cores` too.

A point's spec carries `binding` only where it is not none: points run before binding existed ran
unbound and keep their specs (and so their results).

What the run got is judged from its ranks' outputs (snnbench.network.run): the threads that ran
during the simulate phase in each rank's process, with the CPUs each may run on and the core of
each CPU (snnbench.machine.affinity). `pinned`: each thread on one core of its own; `unpinned`: a
thread may run on several cores; `shared cores`: two threads of a node on one core; `not measured`:
fewer threads ran in the rank's process than it has (Brian2's standalone binary and GeNN simulate in
another process, or on a GPU).
"""

from __future__ import annotations

from collections import defaultdict

from snnbench.machine.hardware import cpu_list

NONE, CORES = "none", "cores"
BINDINGS = (NONE, CORES)
OPENMP = {
    CORES: {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"},
    NONE: {"OMP_PROC_BIND": "false"},
}
# Placement variables a binding replaces (OpenMP's, GNU's and Intel's runtime's).
REPLACED = ("OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY", "KMP_AFFINITY")
SRUN = {CORES: ["--cpu-bind=cores"], NONE: ["--cpu-bind=none"]}


def asked(spec: dict) -> str:
    """The binding a point asks for (none where its spec names none)."""
    return spec.get("binding", NONE)


def environment(spec: dict, environ: dict) -> dict:
    """The point's environment: `environ` with the OpenMP placement of its binding."""
    kept = {k: v for k, v in environ.items() if k not in REPLACED}
    return {**kept, **OPENMP[asked(spec)]}


def mpirun_options(spec: dict, mpi_library: str) -> list[str]:
    """mpirun's options for the point's binding (mpi_library: the first line of `mpirun --version`).
    Raises ValueError where the launcher cannot be told (cores under a launcher other than Open MPI's)."""
    if asked(spec) == NONE:
        return ["--bind-to", "none"]
    if "Open MPI" not in mpi_library:
        raise ValueError(
            f"binding cores under mpirun is implemented for Open MPI's (--map-by slot:PE=<threads> --bind-to "
            f"core); this mpirun is {mpi_library!r}: set the experiment's binding: none, or run it under SLURM"
        )
    return ["--map-by", f"slot:PE={spec['resources']['threads_per_rank']}", "--bind-to", "core"]


def srun_options(spec: dict) -> list[str]:
    return list(SRUN[asked(spec)])


def local_problem(spec: dict, cores: int, cpus: list[int]) -> str | None:
    """Why a point cannot get its binding on this machine (cores: the cores this process may use,
    cpus: their CPUs), or None: binding cores needs a core for every thread of a node."""
    res = spec["resources"]
    threads = res["ranks_per_node"] * res["threads_per_rank"]
    if asked(spec) != CORES or threads <= cores:
        return None
    return (
        f"cores gives each thread a core of its own, and shape {res['nodes']}x{res['ranks_per_node']}x"
        f"{res['threads_per_rank']} (nodes x ranks per node x threads per rank) runs {threads} threads on a node, "
        f"on a machine of {cores} cores (CPUs {cpu_list(cpus)}); allowed: ranks_per_node x threads_per_rank <= "
        f"{cores}, or binding: none"
    )


def workers(rank_binding: dict, threads: int) -> list[dict]:
    """The rank's threads that did its work: the `threads` that used most CPU during simulate (none
    that used none), the rank's main thread first, then in order of creation."""
    ran = [t for t in rank_binding.get("threads", []) if t["cpu_s"] > 0]
    busiest = sorted(ran, key=lambda t: t["cpu_s"], reverse=True)[:threads]
    return sorted(busiest, key=lambda t: (t["tid"] != rank_binding.get("pid"), t["tid"]))


def judge(asked_for: str, ranks: list[dict], launch: str) -> dict:
    """The record's `binding`: what was asked and how it was launched, each working thread's CPUs,
    and what the run got (pinned, unpinned, shared cores or not measured) with its problems."""
    threads, problems = [], []
    for rank in sorted(ranks, key=lambda r: r["rank"]):
        found = rank.get("binding") or {}
        working = workers(found, rank["threads"])
        if len(working) < rank["threads"]:
            problems.append(
                f"rank {rank['rank']}: {len(working)} of its {rank['threads']} threads ran during simulate in its "
                "own process (a simulator that simulates in another process or on a GPU)"
            )
        core = found.get("cores", {})
        for i, t in enumerate(working):
            threads.append(
                {
                    "rank": rank["rank"],
                    "thread": i,
                    "host": found.get("host", rank["host"]),
                    **{k: t[k] for k in ("tid", "cpus", "last_cpu", "cpu_s", "preempted")},
                    "cores": sorted({core.get(str(c), f"cpu{c}") for c in t["cpus"]}),
                }
            )
    obtained = "not measured" if problems or not threads else _placement(threads, problems)
    if asked_for == CORES and obtained == "unpinned":
        loose = [f"{label(t)} (CPUs {cpu_list(t['cpus'])})" for t in threads if len(t["cores"]) > 1]
        problems.append(f"asked cores, but {', '.join(loose)} may run on several cores")
    return {"asked": asked_for, "launch": launch, "obtained": obtained, "problems": problems, "threads": threads}


def _placement(threads: list[dict], problems: list[str]) -> str:
    """pinned, unpinned or shared cores (adding which threads share which core to `problems`)."""
    if any(len(t["cores"]) > 1 for t in threads):
        return "unpinned"
    on_core = defaultdict(list)
    for t in threads:
        on_core[(t["host"], t["cores"][0])].append(label(t))
    shared = {where: labels for where, labels in on_core.items() if len(labels) > 1}
    for (host, core), labels in shared.items():
        problems.append(f"threads {', '.join(labels)} share core {core} of {host}")
    return "shared cores" if shared else "pinned"


def label(thread: dict) -> str:
    """r<rank>t<thread>: thread 0 is the rank's main thread."""
    return f"r{thread['rank']}t{thread['thread']}"


def columns(rec: dict) -> dict:
    """The binding columns of points.csv: asked, obtained, each working thread's CPUs and the CPU it
    last ran on (r0t0:0 r0t1:1), the problems. Records from before binding was recorded: obtained
    "not recorded"."""
    found = rec.get("binding")
    if not found:
        return {"binding": asked(rec["point"]), "binding_obtained": "not recorded"}
    threads = found["threads"]
    return {
        "binding": found["asked"],
        "binding_obtained": found["obtained"],
        "binding_cpus": " ".join(f"{label(t)}:{cpu_list(t['cpus'])}" for t in threads),
        "binding_last_cpus": " ".join(f"{label(t)}:{t['last_cpu']}" for t in threads),
        "binding_problems": "; ".join(found["problems"]),
    }


def summary(rec: dict) -> str:
    """One line for provenance.html: asked, how launched, obtained, each thread's CPUs."""
    found = rec.get("binding")
    if not found:
        return f"asked {asked(rec['point'])}; not recorded"
    threads = ", ".join(f"{label(t)} CPUs {cpu_list(t['cpus'])} (last {t['last_cpu']})" for t in found["threads"])
    problems = f"; {'; '.join(found['problems'])}" if found["problems"] else ""
    return f"asked {found['asked']} ({found['launch']}): {found['obtained']}; {threads}{problems}"
