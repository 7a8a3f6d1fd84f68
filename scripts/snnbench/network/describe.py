"""Deriving a network model's description (rule describe_network): the model's module run in the model's
environment, `python -m <module> PARAMS_JSON OUT_JSON`, its output in the rule's log; a failure names
the model, the description and the log."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from snnbench import environments


class DerivationFailed(RuntimeError):
    """The description could not be derived; the message names it and its log."""


def describe_network(model: str, derivation: dict, out: Path, log_path: Path) -> None:
    python = environments.python(derivation["environment"])
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as params:
        json.dump(derivation["params"], params)
    with open(log_path, "w") as log:
        done = subprocess.run(
            [python, "-m", derivation["module"], params.name, str(out)], stdout=log, stderr=subprocess.STDOUT
        )
    Path(params.name).unlink(missing_ok=True)
    if done.returncode != 0 or not out.exists():
        raise DerivationFailed(
            f"{model}: deriving {out} in environment {derivation['environment']} failed "
            f"(exit code {done.returncode}); see {log_path}"
        )
