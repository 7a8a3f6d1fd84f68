"""Snakemake entry (configure_point): write the point's spec, its full parameter set."""

import json
from pathlib import Path

spec = snakemake.params.spec  # noqa: F821 (provided by Snakemake)
Path(snakemake.output.spec).write_text(json.dumps(spec, indent=1) + "\n")  # noqa: F821
