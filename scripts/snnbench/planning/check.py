"""`python -m snnbench.planning.check FILE...` (`make check-config`): the workflow's messages for
config files, without running anything.

The files are read on top of config/config.yaml, as `--configfile` puts them, and planned by the
workflow's own planner (snnbench.planning.campaign), so that what this says ok the workflow runs, and what
it refuses the workflow refuses in the same lines. Not checked here: what only the host that runs
can say (environments, writable folders: snnbench.planning.before_jobs).
"""

from __future__ import annotations

import argparse

from snnbench.paths import CONFIG
from snnbench.planning import campaign


def check(files: list[str]) -> list[str]:
    """The lines the workflow refuses these config files with (given with --configfile on top of
    config/config.yaml); [] if it plans them."""
    problems = [line for path in [CONFIG, *files] for line in campaign.unreadable(path)]
    if problems:
        return problems
    try:
        campaign.plan_files(files)
    except campaign.ConfigRefused as error:
        return str(error).splitlines()
    return []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="config files as given to --configfile")
    files = parser.parse_args(argv).files
    problems = check(files)
    print("\n".join(problems) or f"{', '.join(campaign.shown_path(f) for f in [*files, CONFIG])}: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
