"""The hardware and software record of a point, as beNNch archives it: one JSON file per node
(`hardware/<host>.json` beside the record) with the CPU topology (hwloc's lstopo), memory, the MPI
library, the simulator's linked libraries, loaded environment modules, OpenMP/affinity and SLURM
settings, and the CPUs each rank of that node was bound to.

Node facts are gathered once per node by its node-local rank 0 (`write_node`); every rank
reports its own binding (`rank_binding`) in its rank output, and the point's parent merges both
into the node files (`write_nodes`). A tool that is missing or fails yields
"not available: <why>" in the file, never an error.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from snnbench.machine import affinity, module_tools

# Where a launcher says which rank of its node a process is (Open MPI, SLURM's srun, MPICH/Hydra, PMI).
LOCAL_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "PMI_LOCAL_RANK")
# Variables that decide threads and their placement, and the job's nodes and CPU binding.
PLACEMENT_VARIABLE_PREFIXES = (
    "OMP_",
    "GOMP_",
    "KMP_",
    "SLURM_CPU_BIND",
    "SLURM_CPUS_",
    "SLURM_DISTRIBUTION",
    "OMPI_MCA_hwloc",
)
PLACEMENT_VARIABLES = (
    "SLURM_JOB_NODELIST",
    "SLURM_NODELIST",
    "SLURM_JOB_PARTITION",
    "SLURM_TASKS_PER_NODE",
    "LOADEDMODULES",
)
TOOL_TIMEOUT_S = 30
HARDWARE_DIR = "hardware"
# The machine a point ran on, for references per machine (config `machine:`, set for the point's
# process by its execute job; a site may also export them in its profile or shell).
MACHINE_VARIABLES = {"site": "SNNBENCH_MACHINE_SITE", "partition": "SNNBENCH_MACHINE_PARTITION"}


def machine_environment(machine_config: dict) -> dict[str, str]:
    """The variables that carry the config's `machine:` block to a point's processes."""
    return {MACHINE_VARIABLES[key]: value for key, value in machine_config.items() if value}


def machine(hostname: str, slurm_partition: str | None = None, environ=os.environ) -> dict:
    """The machine's name for references, ReFrame's `system:partition`: the site (config
    `machine.site`, else the SLURM cluster's name, else the host's name) and the partition (config
    `machine.partition`, else the SLURM partition, else none): `site:partition` or `site`."""
    site = environ.get(MACHINE_VARIABLES["site"]) or environ.get("SLURM_CLUSTER_NAME") or hostname
    partition = environ.get(MACHINE_VARIABLES["partition"]) or slurm_partition or None
    return {"name": f"{site}:{partition}" if partition else site, "site": site, "partition": partition}


NOT_AVAILABLE = "not available: "


def not_available(why: str) -> str:
    return NOT_AVAILABLE + why


def is_available(text: str) -> bool:
    """Whether a fact was gathered (not_available() says why not)."""
    return not text.startswith(NOT_AVAILABLE)


def tool_output(argv: list[str], timeout_s: float = TOOL_TIMEOUT_S) -> str:
    """A tool's standard output, or why there is none."""
    if shutil.which(argv[0]) is None:
        return not_available(f"{argv[0]} not on PATH")
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as error:
        return not_available(f"{' '.join(argv)}: {error}")
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or [""])[-1]
        return not_available(f"{' '.join(argv)} exited with {out.returncode}: {last}")
    return out.stdout.strip()


def topology() -> str:
    """The CPU topology as hwloc prints it (packages, NUMA nodes, caches, cores, PUs)."""
    tool = "lstopo-no-graphics" if shutil.which("lstopo-no-graphics") else "lstopo"
    text = tool_output([tool, "--of", "console", "--no-io"])
    return text if is_available(text) else text + " (Debian package hwloc)"


def installed_memory(meminfo: Path = Path("/proc/meminfo")) -> dict:
    """Totals of /proc/meminfo, MB."""
    wanted = {"MemTotal": "total_mb", "MemAvailable": "available_mb", "SwapTotal": "swap_total_mb"}
    try:
        lines = meminfo.read_text().splitlines()
    except OSError as error:
        return {"error": not_available(str(error))}
    found = {}
    for line in lines:
        name, _, value = line.partition(":")
        if name in wanted and value.split():
            found[wanted[name]] = round(int(value.split()[0]) / 1024, 1)  # kB
    return found


def mpi_library() -> str:
    """The MPI library's version: ompi_info (Open MPI), else the launcher's --version."""
    text = tool_output(["ompi_info", "--version"])
    if not is_available(text):
        text = tool_output(["mpirun", "--version"])
    return text.splitlines()[0] if text else not_available("empty version output")


def linked_libraries(paths: list[str]) -> dict[str, str]:
    """`ldd` of each of the simulator's shared libraries."""
    if not paths:
        return {"": not_available("the simulator names no shared library")}
    return {path: tool_output(["ldd", path]) for path in paths}


def loaded_modules(environ=os.environ) -> str:
    """`module list` where environment modules (Lmod, Tcl modules) are set up, else why not. A
    process started with modules loaded inherits their variables but not the shell's `module`
    function (a module build's point: snnbench.machine.modules); it is defined from the tool's
    command where its variable is set (snnbench.machine.module_tools.module_function)."""
    function = module_tools.module_function(environ)
    if function is None and not any(k in environ for k in ("MODULESHOME", "BASH_FUNC_module%%")):
        return not_available("no environment modules (neither LMOD_CMD, MODULES_CMD nor MODULESHOME set)")
    define = f"if ! type module >/dev/null 2>&1; then {function}; fi; " if function else ""
    text = tool_output(["bash", "-c", define + "module list 2>&1"])
    return text or f"no modules loaded (LOADEDMODULES={environ.get('LOADEDMODULES', '')!r})"


def settings(environ=os.environ) -> dict[str, str]:
    """OpenMP, affinity and SLURM placement variables of this process."""
    return {
        k: v
        for k, v in sorted(environ.items())
        if k.startswith(PLACEMENT_VARIABLE_PREFIXES) or k in PLACEMENT_VARIABLES
    }


def node_local_rank(environ=os.environ) -> int:
    """This process's rank on its node, from its launcher; 0 for a process started alone."""
    for name in LOCAL_RANK_VARIABLES:
        if environ.get(name, "").isdigit():
            return int(environ[name])
    return 0


def rank_binding(rank: int, cpus: list[int] | None = None, threads: list[dict] | None = None) -> dict:
    """What one rank reports of itself: its node, its rank there, the CPUs it may run on (cpus: as
    its launcher gave them, read before an OpenMP runtime bound its main thread; default: now) and,
    where given, its threads (snnbench.machine.affinity.ran_between) with the core of each CPU."""
    cpus = sorted(os.sched_getaffinity(0)) if cpus is None else cpus
    found = {
        "rank": rank,
        "host": socket.gethostname(),
        "node_local_rank": node_local_rank(),
        "pid": os.getpid(),
        "cpus": cpus,
    }
    if threads is not None:
        seen = {cpu for t in threads for cpu in t["cpus"]} | set(cpus)
        found["threads"] = threads
        found["cores"] = {str(cpu): core for cpu, core in affinity.cores(seen).items()}
    return found


def node_facts(libraries: list[str]) -> dict:
    """Everything about this node and its software (once per node), with the time it took."""
    start = time.perf_counter()
    facts = {
        "hostname": socket.gethostname(),
        "gathered_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "logical_cpus": os.cpu_count(),
        "topology": topology(),
        "memory": installed_memory(),
        "mpi_library": mpi_library(),
        "linked_libraries": linked_libraries(libraries),
        "modules": loaded_modules(),
        "settings": settings(),
    }
    facts["gather_s"] = round(time.perf_counter() - start, 4)
    return facts


def write_node(rank_dir: Path, libraries: list[str]) -> Path | None:
    """On the node-local rank 0 only: this node's facts into the ranks' folder."""
    if node_local_rank() != 0:
        return None
    facts = node_facts(libraries)
    path = Path(rank_dir) / f"node-{facts['hostname']}.json"
    path.write_text(json.dumps(facts, indent=1))
    return path


def write_nodes(rank_dir: Path, bindings: list[dict], point_dir: Path) -> list[str]:
    """The node files of a run (each with its ranks' bindings) as `hardware/<host>.json` in the
    point's folder; returns their paths relative to it. A node whose facts are missing gets a
    file that says so, with its ranks."""
    out = Path(point_dir) / HARDWARE_DIR
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    nodes = {p.name.removeprefix("node-").removesuffix(".json"): p for p in Path(rank_dir).glob("node-*.json")}
    written = []
    for host in sorted({*nodes, *(b["host"] for b in bindings)}):
        facts = json.loads(nodes[host].read_text()) if host in nodes else {"hostname": host}
        facts.setdefault("topology", not_available("no rank of this node gathered its facts"))
        facts["ranks"] = sorted((b for b in bindings if b["host"] == host), key=lambda b: b["rank"])
        (out / f"{host}.json").write_text(json.dumps(facts, indent=1) + "\n")
        written.append(f"{HARDWARE_DIR}/{host}.json")
    return written


def cpu_list(cpus: list[int]) -> str:
    """0-3,8 for [0, 1, 2, 3, 8]."""
    ranges, start = [], None
    for i, cpu in enumerate(cpus):
        if start is None:
            start = cpu
        if i + 1 == len(cpus) or cpus[i + 1] != cpu + 1:
            ranges.append(f"{start}" if start == cpu else f"{start}-{cpu}")
            start = None
    return ",".join(ranges)


def summary(facts: dict) -> str:
    """One line per node for provenance.html: CPUs, memory, MPI, modules and each rank's CPUs."""
    first = (facts.get("topology") or "").splitlines()[:1]
    memory_mb = (facts.get("memory") or {}).get("total_mb")
    modules = facts.get("modules") or not_available("not recorded")
    parts = [
        f"{facts.get('logical_cpus', '?')} CPUs",
        f"{memory_mb / 1024:.1f} GiB" if memory_mb else "memory unknown",
        f"topology: {first[0].strip() if first else 'unknown'}",
        f"MPI: {facts.get('mpi_library', 'unknown')}",
        "modules: " + (" ".join(modules.split())[:120] if is_available(modules) else "none"),
    ]
    ranks = "; ".join(f"rank {b['rank']} on CPUs {cpu_list(b['cpus'])}" for b in facts.get("ranks", []))
    return f"{facts.get('hostname')}: " + ", ".join(parts) + (f"; {ranks}" if ranks else "")
