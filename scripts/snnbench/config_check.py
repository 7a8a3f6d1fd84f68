"""`python -m snnbench.config_check FILE...` (`make check-config`): the workflow's messages for
config files, without running anything.

The files are read on top of config/config.yaml, as `--configfile` puts them, and planned by the
workflow's own planner (snnbench.planning), so that what this says ok the workflow runs, and what
it refuses the workflow refuses in the same lines. Not checked here: what only the host that runs
can say (environments, writable folders: snnbench.before_jobs).
"""

from __future__ import annotations

import argparse

from snnbench import planning

BASE = "config/config.yaml"


def read(files: list[str]) -> dict:
    """The files merged as Snakemake merges config files (later ones update earlier ones)."""
    import yaml
    from snakemake.utils import update_config

    merged: dict = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            update_config(merged, yaml.safe_load(f))
    return merged


def check(files: list[str]) -> list[str]:
    """The lines the workflow refuses these config files with (given with --configfile on top of
    config/config.yaml); [] if it plans them."""
    merged_order = [BASE, *files]
    problems = [line for path in merged_order for line in planning.unreadable(path)]
    if problems:
        return problems
    try:
        # Snakemake names the --configfile files before the workflow's own.
        planning.plan(read(merged_order), [*files, BASE])
    except planning.ConfigRefused as error:
        return str(error).splitlines()
    return []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="config files as given to --configfile")
    files = parser.parse_args(argv).files
    problems = check(files)
    print("\n".join(problems) or f"{', '.join(planning.shown_path(f) for f in [*files, BASE])}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
