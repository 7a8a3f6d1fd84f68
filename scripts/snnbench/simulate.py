"""`python -m snnbench.simulate SPEC OUTDIR`: one rank of a network point without Snakemake (the
network family's driver, snnbench.network.simulate; kept as the documented entry)."""

import sys

from snnbench.network.simulate import main

if __name__ == "__main__":
    main(sys.argv[1:])
