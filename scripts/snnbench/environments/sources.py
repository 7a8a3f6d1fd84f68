"""Third-party sources that are not on a package index, named by their upstream release: a URL and a
digest of the files the project uses, as a conda recipe's `source: {url, sha256}` or a Spack
`version(..., sha256=...)`.

The digest is of the files, not of the archive's bytes: paths relative to the archive's one top
folder and their contents (a symbolic link by its target), so that GitHub's tag archive, `git
archive`'s and a re-compressed copy of the same tree all verify. A source used as a subset (the
multi-area model) names the files it uses (`include`); only they are digested and unpacked.

An environment file names its source with a line `# source: <name>`: a Python package pip installs
from the tree; `# source: <name> make`: a tree built in place with make and kept; `# source: <name>
tree`: a tree kept as it is (code a point imports from its folder, e.g. the multi-area model's).
Where a source's archive <name>.tar.gz is looked for, in order:

1. the configured folder: the config key `third_party`, else $SNNBENCH_THIRD_PARTY;
2. the checkout's third_party/ (ignored by git; `make prepare-gpu` fills it for a GPU machine);
3. the per-machine cache, ${SNNBENCH_SOURCE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/snnbench/sources};
4. its URL, downloaded once per machine into that cache (snnbench.environments.downloads): to a
   temporary file, verified, then renamed, so that a partial or wrong file is never kept. A mirror
   (the config key `source_mirror`, else $SNNBENCH_SOURCE_MIRROR: a base URL or a folder) replaces
   the URL's `https://github.com/` prefix, as conda's and Spack's mirrors do.

A file found with other files than the digest names is refused, naming both digests. Standard library
only: `.ci/run` runs it before any environment exists (`python3 -m snnbench.environments.sources mirror`).
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import functools
import hashlib
import json
import os
import re
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from snnbench.environments import downloads
from snnbench.environments.source_patches import GENN_4_CUDA_13, MAM_NEST_3_10_NUMPY_2
from snnbench.paths import REPO

GITHUB = "https://github.com/"
FOLDER_ENV = "SNNBENCH_THIRD_PARTY"
MIRROR_ENV = "SNNBENCH_SOURCE_MIRROR"
CACHE_ENV = "SNNBENCH_SOURCE_CACHE"
CHECKOUT_FOLDER = REPO / "third_party"
TIMEOUT_S = 20  # a download silent this long has failed (a build must stop within 30 s without network)


@dataclass(frozen=True)
class Source:
    """One upstream release: its archive's file is `<name>.tar.gz`."""

    name: str
    url: str
    files_sha256: str
    license: str
    # Glob patterns (fnmatch, relative to the top folder) of the files the project uses; empty: all.
    include: tuple[str, ...] = ()
    # Edits to the unpacked tree before it is built: (file, text, replacement), each text found once.
    patches: tuple[tuple[str, str, str], ...] = ()
    # Glob patterns of files left out (digested and unpacked by no one): a file some copies lack.
    exclude: tuple[str, ...] = ()
    # How a simulator build (`builds.<name>.source: <this name>`) installs the tree, where it is one:
    # snnbench.environments.builds.source_recipe's `wheel` or `cmake-install`.
    recipe: str | None = None

    @property
    def file(self) -> str:
        return f"{self.name}.tar.gz"

    def uses(self, relative: str) -> bool:
        if any(fnmatch.fnmatchcase(relative, pattern) for pattern in self.exclude):
            return False
        return not self.include or any(fnmatch.fnmatchcase(relative, pattern) for pattern in self.include)


SOURCES = {
    source.name: source
    for source in (
        # GeNN 4.9 for Brian2GeNN 1.7 (built in place with make: envs/brian2genn.yaml).
        Source(
            "genn-4.9.0",
            GITHUB + "genn-team/genn/archive/refs/tags/4.9.0.tar.gz",
            "0799c942912924f4d36dadf55e42a1dfcb03ae1d05b72a669b33085156dd4555",
            "LGPL-2.1",
            patches=(GENN_4_CUDA_13,),
        ),
        # GeNN 5.4 for PyGeNN (pip-installed from the tree: envs/pygenn.yaml).
        Source(
            "genn-5.4.0",
            GITHUB + "genn-team/genn/archive/refs/tags/5.4.0.tar.gz",
            "e4331d9351c8ebd8ea2bbf2ba5c52bcc28baaa752b555bf7a7e5002389b61dde",
            "LGPL-2.1",
        ),
        # INM-6's multi-area model of macaque visual cortex (Schmidt et al. 2018): the files its network
        # description is derived from (not its figures, notebooks or tests but one file of each it loads).
        # Its own NEST simulation (the reference run) needs three edits on NEST 3.10 and numpy 2.
        Source(
            "multi-area-model-1.2.0",
            GITHUB + "INM-6/multi-area-model/archive/refs/tags/v1.2.0.tar.gz",
            "a221434324e18c3054ca972fa972159592fc106d8b5c3a5e59b272e7bfc49fa6",
            "CC BY-NC-SA 4.0",
            include=(
                "LICENSE.md",
                "config_template.py",
                "multiarea_model/*",
                "figures/SchueckerSchmidt2017/K_prime_original.npy",
                "tests/fullscale_rates.json",
            ),
            patches=MAM_NEST_3_10_NUMPY_2,
        ),
        # NEST 3.8's release tree (GPL-2.0-or-later) for a simulator build (config/experiments/nest-releases.yaml):
        # 3.8 is not on PyPI and its tree has no wheel build, so CMake installs it. One example's picture is
        # left out (copies made without it verify too).
        Source(
            "nest-simulator-3.8",
            GITHUB + "nest/nest-simulator/archive/refs/tags/v3.8.tar.gz",
            "ed4962883b96f714c287faebef2d15182740de15ef1de214e376788a0c03191b",
            "GPL-2.0-or-later",
            exclude=("pynest/examples/sudoku/output/sudoku_noise_comparison.gif",),
            recipe="cmake-install",
        ),
    )
}
# `# source: <name>` or `# source: <name> make` in an environment file.
SOURCE_LINE = re.compile(r"^#\s*source:\s*(\S+)(?:\s+(make|tree))?\s*$")


class SourceMissing(RuntimeError):
    """A source cannot be had, or a file is not the source: the message says what to do."""


@dataclass(frozen=True)
class Settings:
    """Where sources are looked for beyond the checkout and the cache: a folder, a mirror."""

    folder: str | None = None
    mirror: str | None = None

    @classmethod
    def of(cls, config: dict | None = None) -> Settings:
        """The config's keys (`third_party`, `source_mirror`), else the environment variables."""
        config = config or {}
        return cls(
            folder=config.get("third_party") or os.environ.get(FOLDER_ENV) or None,
            mirror=config.get("source_mirror") or os.environ.get(MIRROR_ENV) or None,
        )


def source_line(lines: list[str], where: str) -> dict | None:
    """The source an environment file names ({source, files_sha256[, build: make]}), None if none."""
    found = [m.groups() for line in lines if (m := SOURCE_LINE.match(line.strip()))]
    if len(found) > 1:
        raise SourceMissing(f"{where}: more than one `# source:` line; one is allowed")
    if not found:
        return None
    name, build = found[0]
    if name not in SOURCES:
        raise SourceMissing(f"{where}: `# source: {name}` is not a known source; known are {', '.join(SOURCES)}")
    source = SOURCES[name]
    found = {"source": name, "files_sha256": source.files_sha256, **({"build": build} if build else {})}
    if source.patches:  # a changed edit makes another environment
        found["patches_sha256"] = hashlib.sha256(json.dumps(source.patches).encode()).hexdigest()[:16]
    return found


def cache_folder() -> Path:
    default = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "snnbench" / "sources"
    return Path(os.environ.get(CACHE_ENV) or default).expanduser().absolute()


def _members(tar: tarfile.TarFile) -> list[tuple[str, tarfile.TarInfo]]:
    """(path below the one top folder, member) of every file and link of an archive."""
    members = [m for m in tar.getmembers() if m.isfile() or m.issym() or m.islnk()]
    tops = {m.name.lstrip("./").split("/", 1)[0] for m in tar.getmembers() if m.name.strip("./")}
    if len(tops) != 1 or any("/" not in m.name.lstrip("./") for m in members):
        raise SourceMissing(f"{tar.name}: not an archive of one top folder (as GitHub's and `git archive`'s are)")
    return [(m.name.lstrip("./").split("/", 1)[1], m) for m in members]


def files_digest(path: Path, source: Source | None = None) -> str:
    """The SHA-256 (hex) of an archive's files that the source uses: one line per file, sorted by
    path, `<path> <SHA-256 of its content>` (a symbolic link: `<path> -> <target>`)."""
    lines = []
    try:
        with tarfile.open(path) as tar:
            for relative, member in _members(tar):
                if source and not source.uses(relative):
                    continue
                if member.issym():
                    lines.append(f"{relative} -> {member.linkname}")
                    continue
                with tar.extractfile(member) as content:
                    lines.append(f"{relative} {hashlib.file_digest(content, 'sha256').hexdigest()}")
    except PermissionError as error:  # another user's file in a shared cache (docs/sources.md)
        raise SourceMissing(f"{path}: {error.strerror}; its owner can make it group-readable (chmod g+r)") from None
    except (tarfile.TarError, OSError, EOFError) as error:
        raise SourceMissing(f"{path}: not a readable archive ({' '.join(str(error).split())})") from None
    return hashlib.sha256("".join(line + "\n" for line in sorted(lines)).encode()).hexdigest()


def verify(source: Source, path: Path) -> Path:
    """The file, if its files are the source's; else SourceMissing naming both digests."""
    found = files_digest(path, source)
    if found != source.files_sha256:
        raise SourceMissing(
            f"{path} is not {source.name} ({source.url}): the digest of its files is {found}, "
            f"expected {source.files_sha256} (snnbench.environments.sources.SOURCES). Remove or replace the file."
        )
    return path


def folders(settings: Settings) -> list[Path]:
    """Where an archive is looked for before it is downloaded, in order."""
    found = [Path(settings.folder).expanduser().absolute()] if settings.folder else []
    return [*found, CHECKOUT_FOLDER, cache_folder()]


def mirrored_url(source: Source, mirror: str | None) -> str:
    """The URL to download from: the source's, its GitHub prefix replaced by the mirror's base (a URL
    or a folder)."""
    if not mirror:
        return source.url
    rest = source.url.removeprefix(GITHUB)
    if re.match(r"^[a-z][a-z0-9+.-]*://", mirror):
        return mirror.rstrip("/") + "/" + rest
    return Path(mirror).expanduser().absolute().joinpath(rest).as_uri()


def locate(name: str, settings: Settings | None = None, download: bool = True) -> Path:
    """The verified archive of source `name`: from a folder, else downloaded into the cache."""
    source, settings = SOURCES[name], settings or Settings.of()
    for folder in folders(settings):
        if (folder / source.file).is_file():
            return verify(source, folder / source.file)
    if not download:
        raise SourceMissing(_missing(source, settings, "not downloaded (this step does not download)"))
    return fetch(source, settings)


def fetch(source: Source, settings: Settings) -> Path:
    """Download the source into the cache (once per machine: a second process waits for the first),
    to a temporary file that is verified before it takes the archive's name (downloads.into_cache)."""
    url = mirrored_url(source, settings.mirror)
    accept = functools.partial(_accept, source, settings, url)
    try:
        return downloads.into_cache(url, cache_folder() / source.file, TIMEOUT_S, accept)
    except downloads.DownloadFailed as error:
        raise SourceMissing(_missing(source, settings, f"downloading {url} failed: {error}")) from None
    except OSError as error:  # the cache cannot be written: another user's (docs/sources.md), or full
        where = error.filename2 or error.filename or cache_folder()  # a rename's target: a folder in its place
        why = f"{where}: {error.strerror or error}, in the source cache (${CACHE_ENV})"
        shared = "; a cache shared by a group needs a setgid group folder and umask 002 (docs/sources.md)"
        raise SourceMissing(why + (shared if isinstance(error, PermissionError) else "")) from None


def _accept(source: Source, settings: Settings, url: str, path: Path, got: downloads.Download | None) -> None:
    """Nothing if the file is the source's archive; else SourceMissing, for a download naming the URL,
    what the server sent and what to fix (not the temporary file: it is not kept)."""
    if got is None:
        verify(source, path)
        return
    try:
        found = files_digest(path, source)
        why = f"not {source.name}: the digest of its files is {found}, expected {source.files_sha256} (SOURCES)"
    except SourceMissing:  # an error or login page, say
        found, why = None, f"not an archive: the server sent {got.sent()}"
    if found == source.files_sha256:
        return
    why = f"downloaded from {url}: {why}; it was not kept"
    if not settings.mirror:
        raise SourceMissing(_missing(source, settings, why))
    raise SourceMissing(
        f"source {source.name}: {why}. The mirror is what to fix: ${MIRROR_ENV} (or the config key "
        f"source_mirror) is {settings.mirror}; it should serve the release's archive at that path"
    )


def _missing(source: Source, settings: Settings, why: str) -> str:
    places = ", ".join(str(folder) for folder in folders(settings))
    return (
        f"source {source.name}: {why}. Set ${MIRROR_ENV} (or the config key source_mirror) to a mirror of "
        f"{GITHUB} (a base URL or a folder), or put {source.file} (any archive of that release's tree) into "
        f"one of: {places} (${FOLDER_ENV} or the config key third_party names another folder)"
    )


def unpack(source: Source | str, archive: Path, destination: Path) -> Path:
    """The files of `archive` that the source uses, unpacked into destination/<name>; returns it."""
    source = SOURCES[source] if isinstance(source, str) else source
    name, tree = source.name, destination / source.name
    with tarfile.open(archive) as tar:
        for relative, member in _members(tar):
            if source.uses(relative):
                member = member.replace(name=f"{name}/{relative}", deep=False)
                if member.islnk():  # a hard link names its target by the archive's path
                    member = member.replace(linkname=f"{name}/{member.linkname.split('/', 1)[1]}", deep=False)
                tar.extract(member, destination, filter="data")
    return tree


def patch(name: str, tree: Path) -> list[str]:
    """Apply the source's patches to its unpacked tree; the files patched. A text that is not found
    once is an error: the tree is not the one the patch was written for."""
    patched = []
    for relative, text, replacement in SOURCES[name].patches:
        path = tree / relative
        content = path.read_text()
        if content.count(text) != 1:
            raise SourceMissing(f"{name}: {relative} does not hold the text to patch once")
        path.write_text(content.replace(text, replacement))
        patched.append(relative)
    return list(dict.fromkeys(patched))


def ensure(names: list[str], settings: Settings | None = None) -> dict[str, Path]:
    """Every named source located (downloaded if need be) and verified, before anything is built."""
    return {name: locate(name, settings) for name in dict.fromkeys(names)}


def mirror_layout(folder: Path, destination: Path) -> list[Path]:
    """A mirror of GitHub's paths for the sources whose archives `folder` holds: links under
    destination (e.g. genn-team/genn/archive/refs/tags/4.9.0.tar.gz), for `python -m http.server`
    or $SNNBENCH_SOURCE_MIRROR=<destination>."""
    made = []
    for source in SOURCES.values():
        if (folder / source.file).is_file():
            link = destination / source.url.removeprefix(GITHUB)
            link.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                link.unlink()
            link.symlink_to((folder / source.file).absolute())
            made.append(link)
    return made


def main(argv: list[str] | None = None) -> int:
    """`python -m snnbench.environments.sources fetch [NAME...]` locates (or downloads) and verifies sources;
    `digest ARCHIVE [NAME]` prints an archive's files digest; `mirror FOLDER DEST` lays out a
    folder of archives as a mirror of GitHub's paths."""
    parser = argparse.ArgumentParser(prog="python -m snnbench.environments.sources", description=main.__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_command = commands.add_parser("fetch", help="locate or download, and verify")
    fetch_command.add_argument("names", nargs="*", help=f"default: all ({', '.join(SOURCES)})")
    digest_command = commands.add_parser("digest", help="the digest of an archive's files")
    digest_command.add_argument("archive", type=Path)
    digest_command.add_argument("name", nargs="?", help="only the files this source uses")
    mirror_command = commands.add_parser("mirror", help="lay out a folder of archives as GitHub's paths")
    mirror_command.add_argument("folder", type=Path)
    mirror_command.add_argument("destination", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            unknown = [name for name in args.names if name not in SOURCES]
            if unknown:
                raise SourceMissing(f"no source {', '.join(unknown)}; known are {', '.join(SOURCES)}")
            for name, path in ensure(args.names or list(SOURCES)).items():
                print(f"{name}: {path}")
        elif args.command == "digest":
            print(files_digest(args.archive, SOURCES[args.name] if args.name else None))
        else:
            for link in mirror_layout(args.folder, args.destination):
                print(link)
    except SourceMissing as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
