"""`python -m snnbench.planning.cpu_environments [FAMILY...]`: make (or link into this checkout) every
environment that the families' points use on a machine without a GPU, each family's own list
(Family.cpu_environments, from its registries: simulators, frameworks). What `make test` (all
families) and `make training-envs` (snn-training) call, so that no list of environments is
written twice.
"""

from __future__ import annotations

import argparse
import sys

from snnbench import families
from snnbench.environments import maker


def cpu_environments(names: list[str]) -> list[str]:
    """The environments of these families (every family where none is named), each once."""
    chosen = names or families.names()
    return list(dict.fromkeys(env for name in chosen for env in families.get(name).cpu_environments()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*", help=f"default: all ({', '.join(families.names())})")
    parser.add_argument("--list", action="store_true", help="print the environments, make nothing")
    args = parser.parse_args(argv)
    unknown = [name for name in args.families if name not in families.names()]
    if unknown:
        parser.error(f"no family {', '.join(unknown)}; known: {', '.join(families.names())}")
    environments = cpu_environments(args.families)
    if args.list:
        print(" ".join(environments))
        return 0
    return maker.main(environments)


if __name__ == "__main__":
    sys.exit(main())
