"""The fault matrix (issue 54): every kind of file a run reads or writes (snnbench.results.file_kinds, from the code's
own declarations) times every fault, each through the function of the code that reads or checks that kind, against
the outcome expected of it. A kind without its row fails: a new kind of file cannot be added without its faults.
Real files (a planned campaign, an exported network, a history, an archive, a source served by a folder mirror);
no simulator, no workflow run (tests/e2e/test_fault_matrix_run.py runs one)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import finished_points
from snnbench import environments
from snnbench.environments import builds, sources
from snnbench.jsonfile import DAMAGED, write_json
from snnbench.planning import before_jobs
from snnbench.records import inputs
from snnbench.results import archive, crate_check, file_kinds, history
from test_damaged_inputs import KEY, SIZE, export
from test_history import write_run
from test_history_place import one_line

FAULTS = ("truncated", "random bytes", "another of its kind", "deleted", "field edited", "read-only", "a folder")

SET_ASIDE = "named in one line, set aside, made again"
MADE_AGAIN = "made again"  # gone: its rule (or the next add or download) makes it, nothing to name
REFUSED = "refused in one line naming it"  # before any job, or by the command that reads it: nothing used
HARMLESS = "harmless"  # read as before
UNCHECKED = "read as it is"  # of its kind: nothing tells it from the right one

S, M, R, H, U = SET_ASIDE, MADE_AGAIN, REFUSED, HARMLESS, UNCHECKED
# kind: outcome per fault, in the order of FAULTS.
EXPECTED = {
    "spec.json": (S, S, S, M, S, H, S),
    "record.json": (S, S, S, M, S, H, S),
    "spikes.npz": (S, S, U, M, S, H, S),
    "validation.json": (S, S, U, M, S, H, S),
    "stats.npz": (S, S, U, M, S, H, S),
    "description.json": (S, S, S, M, S, H, S),
    "network.npz": (S, S, S, S, S, H, S),
    "history table": (S, S, U, M, U, H, S),
    "source archive": (R, R, R, M, R, H, R),
    "environment made marker": (H, H, H, R, H, H, H),
    "environment link marker": (S, S, S, M, S, H, S),
    "crate": (R, R, U, R, U, H, R),
    "archive": (R, R, U, R, R, H, R),
}  # fmt: skip

KINDS = {kind.name: kind for kind in file_kinds.kinds()}


def test_every_kind_has_a_row_and_every_fault_an_outcome():
    assert sorted(EXPECTED) == sorted(KINDS), "a kind of file without its row in the fault matrix (or a row left over)"
    assert all(len(row) == len(FAULTS) for row in EXPECTED.values())
    assert set(PROBES) == set(KINDS)
    for kind in KINDS.values():
        assert callable(kind.checker()), kind.checked_by


def damage(path: Path, fault: str, other: Path, edit) -> None:
    """Apply `fault` to the valid file `path`; `other` is another valid file of its kind, `edit` edits a field."""
    if fault == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif fault == "random bytes":
        path.write_bytes(np.random.default_rng(54).bytes(max(path.stat().st_size, 64)))
    elif fault == "another of its kind":
        shutil.copyfile(other, path)
    elif fault == "deleted":
        path.unlink()
    elif fault == "field edited":
        edit(path)
    elif fault == "read-only":
        path.chmod(0o444)
    else:
        path.unlink()
        path.mkdir()


def outcome_of_lines(lines: list[str], path: Path, before: bytes) -> str:
    """What a check that sets aside what it names did: one line naming the file and it kept as <name>.damaged."""
    if lines:
        assert len(lines) == 1 and str(path) in lines[0], lines
        assert any(p.name.endswith(DAMAGED) for p in path.parent.iterdir())  # kept, not deleted
        return SET_ASIDE
    return unchanged(path, before)


def unchanged(path: Path, before: bytes) -> str:
    if not path.exists():
        return MADE_AGAIN
    return HARMLESS if path.is_file() and path.read_bytes() == before else UNCHECKED


# --- a point's files: a planned campaign of two finished points, checked before any job


def point_files(tmp_path: Path, monkeypatch) -> tuple:
    monkeypatch.chdir(tmp_path)
    campaign = finished_points()
    for path, spec in campaign.points.items():
        seed = spec["seed"]
        write_json({"checked": True, "rows": [{"seed": seed}]}, f"{path}/validation.json")
        np.savez_compressed(f"{path}/stats.npz", meta=np.array(json.dumps({"seed": seed})), rates=np.ones(seed))
    return campaign, *map(Path, campaign.points)


def edit_point_file(path: Path) -> None:
    if path.suffix == ".npz":  # its first array under another name
        with np.load(path) as data:
            arrays = {name: data[name] for name in data.files}
        first = next(iter(arrays))
        np.savez_compressed(path, **{f"{first}_edited": arrays.pop(first)}, **arrays)
        return
    content = json.loads(path.read_text())
    if "point" in content:
        content["point"]["seed"] += 10
    elif "model" in content:
        content["model"]["t_sim_ms"] += 100
    else:
        content["row"] = content.pop("rows")
    path.write_text(json.dumps(content))


def probe_point_file(name: str):
    def probe(tmp_path, monkeypatch, fault):
        campaign, first, second = point_files(tmp_path, monkeypatch)
        path = second / name
        before = path.read_bytes()
        damage(path, fault, first / name, edit_point_file)
        lines = before_jobs.set_aside_damaged(campaign, campaign.points, dry_run=False)
        assert all((first / n).is_file() for n in os.listdir(first)), "the other point's files stay"
        if name == "spec.json" and lines:  # written again from the plan at once
            assert json.loads(path.read_text()) == campaign.points[str(second)]
        return outcome_of_lines(lines, path, before)

    return probe


# --- a network's description and its data file: the cheap check before any job, then the digest where read


def probe_network(name: str):
    def probe(tmp_path, monkeypatch, fault):
        description = export(tmp_path / KEY)
        other = export(tmp_path / "other", shift=1.0, params={**SIZE, "network_seed": 2}).parent / name
        path = description.parent / name
        before = path.read_bytes()
        damage(path, fault, other, edit_network_file)
        found = inputs.description_problem(description, SIZE)
        if found:
            return outcome_of_lines(inputs.set_aside_damaged({str(description): found}, False), path, before)
        if not description.exists():
            return MADE_AGAIN  # not made yet: its rule makes it before a point reads it
        content = inputs.read_json(description)
        try:
            with inputs.verified(description.parent / content["file"], content["sha256"], description):
                pass
        except inputs.DamagedInput as error:  # where a point reads it: its job fails in this line
            assert str(path) in str(error) and "\n" not in str(error)
            return SET_ASIDE
        return unchanged(path, before)

    return probe


def edit_network_file(path: Path) -> None:
    if path.suffix == ".json":
        path.write_text(path.read_text().replace('"network_seed": 1', '"network_seed": 3'))
    else:  # a byte of its data, its length and zip directory kept
        data = bytearray(path.read_bytes())
        data[40] ^= 0xFF
        path.write_bytes(bytes(data))


# --- the results history: a run's table, read by `add` (which sets a damaged one aside)


def probe_history(tmp_path, monkeypatch, fault):
    stores = {}
    for seed in (1, 2):
        write_run(tmp_path / f"run{seed}", seed=seed)
        stores[seed] = tmp_path / f"store{seed}"
        history.add(tmp_path / f"run{seed}", stores[seed])
    (path,) = stores[1].glob("*/*.parquet")
    (other,) = stores[2].glob("*/*.parquet")
    before = path.read_bytes()
    damage(path, fault, other, lambda p: pd.read_parquet(p).assign(seed="9").to_parquet(p, index=False))
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        history.known_records(stores[1], path.parent.name)
    return outcome_of_lines(err.getvalue().splitlines(), path, before)


# --- a third-party source in the source cache, located (and downloaded from a folder mirror where missing)


def tarball(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(f"top/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return path


def probe_source(tmp_path, monkeypatch, fault):
    url = sources.GITHUB + "snnbench/faults/archive/1.tar.gz"
    served = tarball(tmp_path / "served.tar.gz", {"a.txt": b"a" * 100, "b.txt": b"b" * 100})
    source = sources.Source("faults-1", url, sources.files_digest(served), "MIT")
    monkeypatch.setitem(sources.SOURCES, source.name, source)
    mirror = tmp_path / "mirror"
    (mirror / "snnbench/faults/archive").mkdir(parents=True)
    shutil.copyfile(served, mirror / "snnbench/faults/archive/1.tar.gz")
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    settings = sources.Settings(mirror=str(mirror))
    path = sources.locate(source.name, settings)
    other = tarball(tmp_path / "other.tar.gz", {"a.txt": b"c" * 100, "b.txt": b"b" * 100})
    before = path.read_bytes()
    damage(path, fault, other, lambda p: tarball(p, {"a.txt": b"a" * 99 + b"!", "b.txt": b"b" * 100}))
    try:
        sources.locate(source.name, settings)
    except sources.SourceMissing as error:
        assert str(path) in str(error) and "\n" not in str(error)
        return REFUSED
    return unchanged(path, before) if fault != "deleted" else MADE_AGAIN if path.is_file() else HARMLESS


# --- the environment cache: a cached environment's made marker, a checkout's link marker


ENV_KEY = "0123456789abcdef"
LINK = builds.LINKED_PREFIX + ENV_KEY  # a build's link in a checkout (tmp_path): its name holds its key


def linked_environment(tmp_path, monkeypatch) -> Path:
    """A cached environment and a checkout's link to it, as rules build_environment and link_environment make them."""
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "cache"))
    environments.cached(ENV_KEY).mkdir(parents=True)
    environments.made_marker(ENV_KEY).write_text(json.dumps({"key": ENV_KEY}))
    environments.link_marker(LINK, tmp_path).parent.mkdir()
    environments.link_marker(LINK, tmp_path).write_text(ENV_KEY + "\n")
    return tmp_path / "other-marker"


def probe_made_marker(tmp_path, monkeypatch, fault):
    other = linked_environment(tmp_path, monkeypatch)
    path = environments.made_marker(ENV_KEY)
    other.write_text(json.dumps({"key": "fedcba9876543210"}))
    damage(path, fault, other, lambda p: p.write_text(json.dumps({"key": ENV_KEY, "python": "3.0"})))
    try:
        environments.linked_python(LINK, ENV_KEY, tmp_path)
    except environments.EnvironmentMissing as error:
        assert str(environments.cached(ENV_KEY)) in str(error) and "\n" not in str(error)
        return REFUSED
    return HARMLESS  # nothing reads what it holds: it says the environment was made to the end


def probe_link_marker(tmp_path, monkeypatch, fault):
    other = linked_environment(tmp_path, monkeypatch)
    path = environments.link_marker(LINK, tmp_path)
    before = path.read_bytes()
    other.write_text("fedcba9876543210\n")
    damage(path, fault, other, lambda p: p.write_text(ENV_KEY[::-1] + "\n"))
    lines = before_jobs.set_aside_stale_links([LINK], dry_run=False, repo=tmp_path)
    assert environments.is_linked(LINK, tmp_path, ENV_KEY) == path.is_file()  # a link that stays is of its key
    return outcome_of_lines(lines, path, before)  # gone: a target of rule all, rule link_environment links it


# --- a run's crate and an experiment's archive: read by crate_check, and by `history add` and import_archive


def probe_crate(tmp_path, monkeypatch, fault):
    crates = {}
    for name in ("mine", "other"):
        crates[name] = tmp_path / name
        crates[name].mkdir()
        graph = [{"@id": "ro-crate-metadata.json", "about": {"@id": "./"}}, {"@id": "./", "name": name}]
        metadata = {"@context": "https://w3id.org/ro/crate/1.1/context", "@graph": graph}
        (crates[name] / "ro-crate-metadata.json").write_text(json.dumps(metadata))
    path = crates["mine"] / "ro-crate-metadata.json"
    before = path.read_bytes()
    damage(path, fault, crates["other"] / path.name, lambda p: p.write_text(p.read_text().replace("mine", "edited")))
    try:
        crate_check.named_contexts(crates["mine"])
    except crate_check.NotACrate as error:
        assert str(path) in str(error) and "\n" not in str(error)
        return REFUSED
    return unchanged(path, before)


def probe_archive(tmp_path, monkeypatch, fault):
    campaign, first, second = point_files(tmp_path, monkeypatch)
    path, other = Path("mine.tar.gz").absolute(), Path("other.tar.gz").absolute()
    archive.pack(path, "mine", [first / "spec.json", first / "record.json"], {})
    archive.pack(other, "other", [second / "spec.json", second / "record.json"], {})
    before = path.read_bytes()
    damage(path, fault, other, edit_archive)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        added = history.main(["add", str(path), "--history", str(tmp_path / "history")])
    said = one_line(err.getvalue())  # `history add` refuses it in one line (this archive holds no points.csv)
    assert added == 2 and said.startswith(f"{path}: ")
    try:
        archive.unpack(path, tmp_path / "unpacked")
    except archive.ArchiveError as error:
        assert str(path) in str(error) and "\n" not in str(error)
        return REFUSED
    assert said.startswith(f"{path}: no finished points found")  # unpacked and read
    return unchanged(path, before)


def edit_archive(path: Path) -> None:
    """A record in it edited, its manifest (and the record's digest there) kept."""
    with tarfile.open(path) as tar:
        members = [(m, tar.extractfile(m).read()) for m in tar.getmembers()]
    with tarfile.open(path, "w:gz") as tar:
        for member, body in members:
            body = body.replace(b'"seed": 1', b'"seed": 7') if member.name.endswith("record.json") else body
            member.size = len(body)
            tar.addfile(member, io.BytesIO(body))


PROBES = {
    **{kind.name: probe_point_file(kind.name) for kind in file_kinds.point_kinds()},
    "description.json": probe_network("description.json"),
    "network.npz": probe_network("network.npz"),
    "history table": probe_history,
    "source archive": probe_source,
    "environment made marker": probe_made_marker,
    "environment link marker": probe_link_marker,
    "crate": probe_crate,
    "archive": probe_archive,
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_a_fault_has_its_expected_outcome(tmp_path, monkeypatch, kind, fault):
    expected = EXPECTED[kind][FAULTS.index(fault)]
    try:
        assert PROBES[kind](tmp_path, monkeypatch, fault) == expected
    finally:
        for path in tmp_path.rglob("*"):  # read-only files, for the temporary folder's removal
            path.chmod(0o755)
