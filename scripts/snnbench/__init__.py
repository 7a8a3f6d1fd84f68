"""snnbench: reproducible benchmarks of spiking neuronal network simulators, as a Snakemake workflow.

`snnbench.__version__` is pyproject.toml's [project] version, the one place it is written."""

from __future__ import annotations


def _version() -> str:
    """pyproject.toml's version where this package lies in a checkout (always the current one, also where the
    workflow runs the package from scripts/ without installing it), else the installed distribution's."""
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text()).get("project", {})
        if project.get("name") == "snnbench":
            return project["version"]
    from importlib import metadata

    return metadata.version("snnbench")


def __getattr__(name: str):
    # Read when asked, not at import: every process imports snnbench, few ask its version.
    if name == "__version__":
        return _version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
