"""A copy of the checkout (the tests' workflow copies, the SLURM tests' shared checkouts, the benches'
throw-away repositories) leaves out run data at its top only: snnbench.results is a package."""

from __future__ import annotations

import os
import shutil

from snnbench import paths


def test_a_copy_of_the_checkout_keeps_the_packages_named_like_run_data(tmp_path):
    top = tmp_path / "checkout"
    for name in ("results/x/record.json", "logs/a.log", ".venv-nest/bin/python", "networks/m/d.json", ".git/HEAD"):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("")
    for name in ("scripts/snnbench/results/report.py", "scripts/snnbench/__pycache__/x.pyc", "scripts/.ruff_cache/a"):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("")
    shutil.copytree(top, tmp_path / "copy", ignore=paths.copy_ignore(top))
    copied = sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*") if p.is_file())
    assert copied == ["scripts/snnbench/results/report.py"]


def test_scripts_go_first_on_pythonpath_and_no_empty_entry_is_left():
    """An empty PYTHONPATH entry is the working directory: a build's probe or a module build's point would
    import whatever snnbench lies there."""
    scripts = str(paths.REPO / "scripts")
    assert paths.scripts_on_path({"HOME": "/h"}) == {"HOME": "/h", "PYTHONPATH": scripts}
    assert paths.scripts_on_path({"PYTHONPATH": ""})["PYTHONPATH"] == scripts
    assert paths.scripts_on_path({"PYTHONPATH": "/site"})["PYTHONPATH"] == os.pathsep.join([scripts, "/site"])
