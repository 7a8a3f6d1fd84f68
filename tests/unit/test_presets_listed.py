"""config/README.md's table of experiment files lists every preset of config/experiments/, each once,
and only files that exist: a new preset is described where users look for one."""

from __future__ import annotations

import re

from conftest import REPO

README = REPO / "config" / "README.md"


def listed() -> list[str]:
    """The presets named in the first column of the README's table rows."""
    return re.findall(r"^\| `experiments/([^`]+\.yaml)` \|", README.read_text(), re.MULTILINE)


def test_every_preset_is_listed_once_and_every_listed_one_exists():
    presets = sorted(path.name for path in (REPO / "config" / "experiments").glob("*.yaml"))
    named = listed()
    assert sorted(set(named)) == sorted(named), "listed twice: " + str({n for n in named if named.count(n) > 1})
    assert sorted(set(presets) - set(named)) == [], "presets config/README.md does not list"
    assert sorted(set(named) - set(presets)) == [], "config/README.md lists presets that do not exist"
