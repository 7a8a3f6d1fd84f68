"""NEST's own hpc_benchmark example, run outside the workflow at snnbench's settings, to tell NEST's
costs from snnbench's (docs/hpc_benchmark.md, "Where the growth comes from").

    PYTHON -m snnbench.dev.hpc_example EXAMPLE --scale 6 [--indegree-scale 0.1] [--threads 1]
        [--presim-ms 100] [--sim-ms 1000] [--synapses hpc|plain] [--seed 55]

EXAMPLE is nest-simulator's pynest/examples/hpc_benchmark.py of the NEST that PYTHON imports (fetch
the tag, e.g. `git show v3.10:pynest/examples/hpc_benchmark.py`); it needs scipy. The example is
run as NEST ships it, with these edits to its text (each checked, so a changed example fails loudly):
its params (threads, scale, times, seed, output folder); the in-degrees scaled as snnbench's
`indegree_scale` does (in-degrees x s, weights / s; the external rate follows the in-degree in the
example's own formula); and with `--synapses plain`, static_synapse and stdp_pl_synapse_hom in place
of the example's `_hpc` variants (snnbench's choice until this comparison). Prints one JSON line:
the example's log (build, presim and sim times), NEST's timers (detailed ones where the build has
them), the connection count, the peak resident memory and the wall time.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from snnbench.network.models import hpc_benchmark as hpc

PLAIN_SYNAPSES = {"static_synapse_hpc": "static_synapse", "stdp_pl_synapse_hom_hpc": "stdp_pl_synapse_hom"}
REPORT = """
    import json as _json
    _status = nest.kernel_status
    _keys = [k for k in _status if k.startswith("time_")] + ["num_connections", "local_spike_counter"]
    _found = {k: _status[k] for k in _keys if k in _status}
    print("HPC_EXAMPLE_STATUS " + _json.dumps(_found, default=lambda v: v.tolist()))
"""


def replace_checked(text: str, old: str, new: str) -> str:
    """Every `old` in the example replaced by `new`; the example must have one."""
    if text.count(old) < 1:
        sys.exit(f"hpc_example: the example has no {old!r}; it changed, adapt snnbench/dev/hpc_example.py")
    return text.replace(old, new)


def edit(source: str, args: argparse.Namespace, out: Path) -> str:
    params = {
        '"num_threads": 4': f'"num_threads": {args.threads}',
        '"scale": 1.0': f'"scale": {args.scale}',
        '"simtime": 250.0': f'"simtime": {args.sim_ms}',
        '"presimtime": 50.0': f'"presimtime": {args.presim_ms}',
        '"path_name": "."': f'"path_name": "{out}"',
        '"log_file": "log"': f'"log_file": "{out}/log"',
        'CE = int(1.0 * NE / params["scale"])': f'CE = int({args.indegree_scale} * NE / params["scale"])',
        'CI = int(1.0 * NI / params["scale"])': f'CI = int({args.indegree_scale} * NI / params["scale"])',
        'JE_pA = conversion_factor * brunel_params["JE"]': (
            f'JE_pA = conversion_factor * brunel_params["JE"] / {args.indegree_scale}'
        ),
        "nest.resolution = params": f"nest.rng_seed = {args.seed}\n    nest.resolution = params",
        "        print(nest.kernel_status)\n": REPORT,
    }
    if args.synapses == "plain":
        params.update(PLAIN_SYNAPSES)
    for old, new in params.items():
        source = replace_checked(source, old, new)
    return source


def run(example: Path, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="hpc-example-") as folder:
        out = Path(folder)
        script = out / "hpc_benchmark.py"
        script.write_text(edit(example.read_text(), args, out))
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=out, check=False)
        wall = time.perf_counter() - start
        if done.returncode:
            sys.exit(f"hpc_example: the example failed ({done.returncode}):\n{done.stderr[-2000:]}")
        status = json.loads(done.stdout.split("HPC_EXAMPLE_STATUS ", 1)[1].splitlines()[0])
        lines = re.findall(r"^\S+ \S+ (\S+) # (.+?) $", next(out.glob("log_*.dat")).read_text(), re.M)
        logged = {name: value for value, name in lines}
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "scale": args.scale,
        "indegree_scale": args.indegree_scale,
        "threads": args.threads,
        "synapses": args.synapses,
        "neurons": int(hpc.NEURONS_PER_SCALE.sum() * args.scale),
        "log": {name: float(value) for name, value in logged.items() if name != "average rate"}
        | {"average_rate_hz": float(logged.get("average rate", "nan"))},
        "nest": status,
        "peak_rss_mb": peak_kb / 1024,
        "wall_s": wall,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", type=Path)
    parser.add_argument("--scale", type=float, required=True)
    parser.add_argument("--indegree-scale", type=float, default=0.1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--presim-ms", type=float, default=100.0)
    parser.add_argument("--sim-ms", type=float, default=1000.0)
    parser.add_argument("--synapses", choices=["hpc", "plain"], default="hpc")
    parser.add_argument("--seed", type=int, default=55)
    args = parser.parse_args(argv)
    print(json.dumps(run(args.example, args)), flush=True)


if __name__ == "__main__":
    main()
