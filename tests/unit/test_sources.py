"""Third-party sources (snnbench.environments.sources): the files' digest of differently made archives, lookup
and download through a real HTTP server (Python's http.server on 127.0.0.1), refusals that say what
to do, and an environment's build stopping at its start without its source."""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

import pytest
from snnbench import environments
from snnbench.environments import maker, sources

FILES = {"README": b"a tiny release\n", "src/main.c": b"int main(void) { return 0; }\n", "bin/run.sh": b"#!/bin/sh\n"}


def make_archive(path: Path, top: str, files: dict[str, bytes], compression: str = "gz", link: bool = True) -> Path:
    """An archive of `files` under one top folder (and a symbolic link), as GitHub and git archive make them."""
    with tarfile.open(path, f"w:{compression}") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size, info.mtime = len(data), 1_700_000_000 + len(name)
            tar.addfile(info, io.BytesIO(data))
        if link:
            info = tarfile.TarInfo(f"{top}/run")
            info.type, info.linkname = tarfile.SYMTYPE, "bin/run.sh"
            tar.addfile(info)
    return path


@pytest.fixture
def tiny_source(tmp_path, monkeypatch):
    """A registered source `tiny-1.0` at a GitHub URL, with no archive anywhere yet, and a fresh cache."""
    (tmp_path / "made").mkdir()
    archive = make_archive(tmp_path / "made" / "tiny-1.0.tar.gz", "tiny-1.0", FILES)
    source = sources.Source(
        "tiny-1.0", sources.GITHUB + "someone/tiny/archive/refs/tags/v1.0.tar.gz", sources.files_digest(archive), "MIT"
    )
    monkeypatch.setitem(sources.SOURCES, source.name, source)
    monkeypatch.setattr(sources, "CHECKOUT_FOLDER", tmp_path / "checkout-third_party")
    monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / "cache"))
    for variable in (sources.FOLDER_ENV, sources.MIRROR_ENV):
        monkeypatch.delenv(variable, raising=False)
    return source, archive


class Mirror:
    """Python's http.server on 127.0.0.1 over a folder laid out as GitHub's paths; counts requests."""

    def __init__(self, root: Path):
        self.root, self.requests = root, []
        mirror = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                mirror.requests.append(self.path)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=root))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def mirror(tmp_path):
    served = Mirror(tmp_path / "mirror")
    yield served
    served.stop()


class Scripted:
    """A server on 127.0.0.1 answering every GET with 200, one Content-Type and body; with `stall_after`,
    only that many bytes of the body, and then nothing until it is released (a transfer cut off), or, with
    `finish`, the rest once released (a slow transfer). Counts the requests."""

    def __init__(self, content_type: str, body: bytes, stall_after: int | None = None, finish: bool = False):
        self.released = threading.Event()
        self.requests = []
        released, requests = self.released, self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[:stall_after])
                self.wfile.flush()
                if stall_after is not None:
                    released.wait()
                    if finish:
                        self.wfile.write(body[stall_after:])

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


def put_on_mirror(mirror: Mirror, source: sources.Source, archive: Path) -> Path:
    path = mirror.root / source.url.removeprefix(sources.GITHUB)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(archive, path)
    return path


# --- the digest of the files, not of the archive's bytes


def test_the_same_tree_in_archives_made_differently_has_one_digest(tmp_path):
    gz = make_archive(tmp_path / "a.tar.gz", "tiny-1.0", FILES)
    xz = make_archive(tmp_path / "b.tar.xz", "tiny-v1.0-other-top", dict(reversed(FILES.items())), "xz")
    plain = tmp_path / "c.tar"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    assert gz.read_bytes() != xz.read_bytes()
    assert sources.files_digest(gz) == sources.files_digest(xz) == sources.files_digest(plain)


def test_one_changed_byte_or_a_missing_file_changes_the_digest(tmp_path):
    reference = sources.files_digest(make_archive(tmp_path / "a.tar.gz", "t", FILES))
    changed = {**FILES, "src/main.c": FILES["src/main.c"].replace(b"0", b"1")}
    assert sources.files_digest(make_archive(tmp_path / "b.tar.gz", "t", changed)) != reference
    fewer = {k: v for k, v in FILES.items() if k != "README"}
    assert sources.files_digest(make_archive(tmp_path / "c.tar.gz", "t", fewer)) != reference
    assert sources.files_digest(make_archive(tmp_path / "d.tar.gz", "t", FILES, link=False)) != reference


def test_a_subset_is_digested_over_the_files_it_uses(tmp_path):
    subset = sources.Source("s", "u", "0", "x", include=("src/*", "README"))
    small = make_archive(tmp_path / "a.tar.gz", "t", FILES, link=False)
    more = make_archive(tmp_path / "b.tar.gz", "t", {**FILES, "figures/big.png": b"\x89PNG"})
    assert sources.files_digest(small, subset) == sources.files_digest(more, subset)
    assert sources.files_digest(small) != sources.files_digest(more)
    tree = sources.unpack(subset, more, tmp_path / "out")
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == ["README", "src/main.c"]


def test_files_a_source_excludes_are_neither_digested_nor_unpacked(tmp_path):
    """NEST 3.8's CI copy lacks one example's GIF that GitHub's archive has: both verify."""
    tree = tmp_path / "nest-simulator-3.8"
    (tree / "pynest").mkdir(parents=True)
    (tree / "CMakeLists.txt").write_text("project(nest)\n")
    source = sources.Source("x", "u", "", "GPL", exclude=("pynest/*.gif",))
    without = tmp_path / "without.tar.gz"
    with tarfile.open(without, "w:gz") as tar:
        tar.add(tree, tree.name)
    (tree / "pynest" / "picture.gif").write_bytes(b"GIF89a")
    with_gif = tmp_path / "with.tar.gz"
    with tarfile.open(with_gif, "w:gz") as tar:
        tar.add(tree, tree.name)
    assert sources.files_digest(with_gif, source) == sources.files_digest(without, source)
    assert sources.files_digest(with_gif) != sources.files_digest(without)
    unpacked = sources.unpack(source, with_gif, tmp_path / "out")
    assert (unpacked / "CMakeLists.txt").exists() and not (unpacked / "pynest" / "picture.gif").exists()


def test_an_archive_of_several_top_folders_is_refused(tmp_path):
    path = tmp_path / "bad.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in ("a/x", "b/y"):
            info = tarfile.TarInfo(name)
            tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(sources.SourceMissing, match="not an archive of one top folder"):
        sources.files_digest(path)


def genn_archive() -> Path:
    try:
        return sources.locate("genn-4.9.0", download=False)
    except sources.SourceMissing as error:
        pytest.skip(f"GeNN 4.9.0's archive is not at hand ({error}); make test fetches it first")


@pytest.mark.slow
def test_the_genn_tree_verifies_repacked_and_as_git_archives_it_and_one_byte_is_refused(tmp_path):
    """GeNN 4.9.0 unpacked, then packed again by git archive (as GitHub makes its tag archives) and
    by tarfile as xz under another top folder: both verify; one changed byte is refused."""
    source = sources.SOURCES["genn-4.9.0"]
    tree = sources.unpack(source, genn_archive(), tmp_path / "unpacked")
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.autocrlf=false"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A", "-f"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], check=True)
    by_git = tmp_path / "git.tar.gz"
    subprocess.run([*git, "archive", "--prefix=genn-4.9.0/", "-o", str(by_git), "HEAD"], check=True)
    repacked = tmp_path / "repacked.tar.xz"
    with tarfile.open(repacked, "w:xz") as tar:
        for path in sorted(p for p in tree.rglob("*") if ".git" not in p.relative_to(tree).parts):
            tar.add(path, f"elsewhere/{path.relative_to(tree)}", recursive=False)
    assert sources.verify(source, by_git) == by_git
    assert sources.verify(source, repacked) == repacked
    makefile = tree / "Makefile"
    makefile.write_bytes(makefile.read_bytes().replace(b"#", b"$", 1))
    changed = tmp_path / "changed.tar.gz"
    with tarfile.open(changed, "w:gz") as tar:
        tar.add(tree, "genn-4.9.0", filter=lambda info: None if "/.git" in info.name else info)
    with pytest.raises(sources.SourceMissing, match=rf"{changed} is not genn-4.9.0 .*expected {source.files_sha256}"):
        sources.verify(source, changed)


def test_the_registered_sources_are_github_tag_archives():
    for source in sources.SOURCES.values():
        assert source.url.startswith(sources.GITHUB) and "/archive/refs/tags/" in source.url
        assert len(source.files_sha256) == 64 and source.license


# --- lookup, then download


def test_a_folder_is_looked_in_before_the_cache_and_the_url(tiny_source, tmp_path, mirror):
    source, archive = tiny_source
    folder = tmp_path / "site-folder"
    folder.mkdir()
    shutil.copyfile(archive, folder / source.file)
    found = sources.locate(source.name, sources.Settings(folder=str(folder), mirror=mirror.url))
    assert found == folder / source.file and mirror.requests == []


def test_a_download_lands_in_the_cache_once_and_is_not_fetched_again(tiny_source, mirror):
    source, archive = tiny_source
    put_on_mirror(mirror, source, archive)
    settings = sources.Settings(mirror=mirror.url)
    first = sources.locate(source.name, settings)
    assert first == sources.cache_folder() / source.file and len(mirror.requests) == 1
    assert sources.locate(source.name, settings) == first
    assert sources.ensure([source.name, source.name], settings) == {source.name: first}
    assert len(mirror.requests) == 1  # the cached file, not the server
    assert [p.name for p in sources.cache_folder().iterdir() if not p.name.endswith(".lock")] == [source.file]


def test_a_tampered_archive_on_the_server_is_refused_and_not_kept(tiny_source, tmp_path, mirror):
    source, _ = tiny_source
    tampered = make_archive(tmp_path / "t.tar.gz", "tiny-1.0", {**FILES, "README": b"a tiny release!\n"})
    put_on_mirror(mirror, source, tampered)
    with pytest.raises(sources.SourceMissing) as refused:
        sources.locate(source.name, sources.Settings(mirror=mirror.url))
    message = str(refused.value)
    assert f"downloaded from {mirror.url}someone/tiny/archive/refs/tags/v1.0.tar.gz" in message
    assert f"expected {source.files_sha256}" in message and sources.files_digest(tampered) in message
    assert [p.name for p in sources.cache_folder().iterdir() if not p.name.endswith(".lock")] == []


def test_a_stopped_server_gives_the_offline_message(tiny_source, mirror):
    source, _ = tiny_source
    mirror.stop()
    with pytest.raises(sources.SourceMissing) as refused:
        sources.locate(source.name, sources.Settings(mirror=mirror.url))
    message = str(refused.value)
    assert f"downloading {mirror.url}someone/tiny/archive/refs/tags/v1.0.tar.gz failed" in message
    assert "$SNNBENCH_SOURCE_MIRROR" in message and "source_mirror" in message
    assert f"put {source.file}" in message and str(sources.CHECKOUT_FOLDER) in message
    assert str(sources.cache_folder()) in message


def test_a_wrong_file_in_a_folder_names_both_digests(tiny_source, tmp_path):
    source, _ = tiny_source
    sources.CHECKOUT_FOLDER.mkdir()
    wrong = make_archive(sources.CHECKOUT_FOLDER / source.file, "tiny-1.0", {"README": b"other\n"})
    with pytest.raises(sources.SourceMissing, match=rf"{wrong} is not tiny-1.0 .*is {sources.files_digest(wrong)}"):
        sources.locate(source.name)


def test_a_mirror_folder_or_url_replaces_githubs_prefix(tmp_path):
    source = sources.SOURCES["genn-4.9.0"]
    assert sources.mirrored_url(source, None) == source.url
    assert sources.mirrored_url(source, "https://m.example.org/gh") == (
        "https://m.example.org/gh/genn-team/genn/archive/refs/tags/4.9.0.tar.gz"
    )
    assert sources.mirrored_url(source, str(tmp_path)) == (
        (tmp_path / "genn-team/genn/archive/refs/tags/4.9.0.tar.gz").as_uri()
    )


def test_a_mirror_folder_laid_out_from_archives_serves_the_download(tiny_source, tmp_path):
    source, archive = tiny_source
    folder = tmp_path / "archives"
    folder.mkdir()
    shutil.copyfile(archive, folder / source.file)
    assert sources.main(["mirror", str(folder), str(tmp_path / "layout")]) == 0
    found = sources.locate(source.name, sources.Settings(mirror=str(tmp_path / "layout")))
    assert found == sources.cache_folder() / source.file


def test_the_config_keys_come_before_the_variables(monkeypatch):
    monkeypatch.setenv(sources.FOLDER_ENV, "/from/variable")
    monkeypatch.setenv(sources.MIRROR_ENV, "https://variable.example.org/")
    assert sources.Settings.of({}) == sources.Settings("/from/variable", "https://variable.example.org/")
    config = {"third_party": "/from/config", "source_mirror": "https://config.example.org/"}
    assert sources.Settings.of(config) == sources.Settings("/from/config", "https://config.example.org/")


def test_the_source_line_of_an_environment_file():
    assert sources.source_line(["channels:", "# source: genn-5.4.0"], "envs/x.yaml") == {
        "source": "genn-5.4.0",
        "files_sha256": sources.SOURCES["genn-5.4.0"].files_sha256,
    }
    assert sources.source_line(["# source: genn-4.9.0 make"], "envs/x.yaml")["build"] == "make"
    assert sources.source_line(["# sources of something"], "envs/x.yaml") is None
    with pytest.raises(sources.SourceMissing, match=r"envs/x.yaml: more than one `# source:` line"):
        sources.source_line(["# source: genn-5.4.0", "# source: genn-4.9.0"], "envs/x.yaml")
    with pytest.raises(sources.SourceMissing, match=r"`# source: genn-9` is not a known source; known are genn-4.9.0"):
        sources.source_line(["# source: genn-9"], "envs/x.yaml")


def test_the_source_and_cuda_are_in_the_key_only_of_environments_with_a_source(monkeypatch, tmp_path):
    defined = environments.definition("pygenn")
    assert defined["third_party"]["source"] == "genn-5.4.0" and len(defined["third_party"]["files_sha256"]) == 64
    assert environments.source_name("brian2genn") == "genn-4.9.0"
    assert "third_party" not in environments.definition("brian2") and environments.source_name("brian2") is None
    monkeypatch.setenv("CUDA_PATH", str(tmp_path))
    assert environments.definition("pygenn")["third_party"]["cuda"] is True
    assert environments.content_key(environments.definition("pygenn")) != environments.content_key(defined)


def test_a_build_without_its_source_stops_at_its_start(tiny_source, tmp_path, monkeypatch, mirror):
    """Offline (a stopped mirror): the environment's build stops before its virtual environment is made."""
    source, _ = tiny_source
    mirror.stop()
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "envs"))
    build = {**maker.named_build("pygenn"), "third_party": {"source": source.name, "files_sha256": "0" * 64}}
    build["key"] = environments.content_key(build)
    with pytest.raises(maker.BuildFailed, match=r"environment pygenn .*source tiny-1.0: downloading .* failed"):
        maker.make(build, [], tmp_path / "build.log", settings=sources.Settings(mirror=mirror.url))
    assert not (tmp_path / "envs" / build["key"]).exists()
    assert "creating the environment" not in (tmp_path / "build.log").read_text()


def test_build_env_fetches_every_source_before_building(tiny_source, tmp_path, monkeypatch, mirror, capsys):
    source, _ = tiny_source
    mirror.stop()
    monkeypatch.setenv(environments.CACHE_ENV, str(tmp_path / "envs"))
    monkeypatch.setenv(sources.MIRROR_ENV, mirror.url)
    monkeypatch.setattr(environments, "source_name", lambda env: source.name if env == "pygenn" else None)
    assert maker.main(["brian2", "pygenn"]) == 1
    assert "source tiny-1.0: downloading" in capsys.readouterr().err
    assert not (tmp_path / "envs").exists()  # brian2, named first, was not built either


# --- a cache shared by a group, downloads killed, mirrors that answer a page


def cache_listing() -> list[str]:
    return sorted(path.name for path in sources.cache_folder().iterdir())


def locate_with_umask(source: sources.Source, mirror_url: str, umask: int) -> Path:
    previous = os.umask(umask)
    try:
        return sources.locate(source.name, sources.Settings(mirror=mirror_url))
    finally:
        os.umask(previous)


def test_a_downloaded_archive_and_the_cache_follow_the_umask(tiny_source, mirror, tmp_path, monkeypatch):
    """umask 002 (a group's shared cache): the group may read and write; umask 077: only the user."""
    source, archive = tiny_source
    put_on_mirror(mirror, source, archive)
    for umask, file_mode, folder_mode in ((0o002, 0o664, 0o775), (0o077, 0o600, 0o700)):
        monkeypatch.setenv(sources.CACHE_ENV, str(tmp_path / f"cache-{umask:03o}" / "sources"))
        found = locate_with_umask(source, mirror.url, umask)
        assert stat.S_IMODE(found.stat().st_mode) == file_mode, f"umask {umask:03o}"
        assert stat.S_IMODE((found.parent / f".{source.file}.lock").stat().st_mode) == file_mode
        for folder in (found.parent, found.parent.parent):  # both made by the download
            assert stat.S_IMODE(folder.stat().st_mode) == folder_mode, f"umask {umask:03o}: {folder}"


NOBODY = 65534  # the second user, and the shared folder's group


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="acting as a second user needs root")
def test_a_second_user_of_the_group_reads_the_archive_the_first_downloaded(tiny_source, mirror, monkeypatch):
    """A setgid group folder under the temporary folder (which every user can pass), umask 007: only
    the group's bits let the second user (uid and gid 65534) read the archive root downloaded."""
    source, archive = tiny_source
    put_on_mirror(mirror, source, archive)
    shared = Path(tempfile.mkdtemp(prefix="snnbench-shared-cache-"))
    if not all(os.stat(folder).st_mode & stat.S_IXOTH for folder in shared.parents):
        shutil.rmtree(shared)
        pytest.skip(f"{shared.parent}: not passable by every user, so not by the second one")
    try:
        os.chown(shared, -1, NOBODY)
        shared.chmod(0o2770)
        monkeypatch.setenv(sources.CACHE_ENV, str(shared / "sources"))
        found = locate_with_umask(source, mirror.url, 0o007)
        assert found.stat().st_gid == NOBODY  # the folder's group, by its setgid bit
        read = subprocess.run(["head", "-c", "2", str(found)], user=NOBODY, group=NOBODY, capture_output=True)
        assert (read.returncode, read.stdout) == (0, b"\x1f\x8b"), read.stderr.decode()
    finally:
        shutil.rmtree(shared)


# A download in its own process, of a source registered there: (name, URL, digest, mirror).
DOWNLOAD = """
import sys
from snnbench.environments import sources
name, url, digest, mirror = sys.argv[1:]
sources.SOURCES[name] = sources.Source(name, url, digest, "MIT")
sources.locate(name, sources.Settings(mirror=mirror))
"""


def wait_for_temporary_file(source: sources.Source, child: subprocess.Popen) -> str:
    """The name of the temporary file the child's download of `source` makes in the cache."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and child.poll() is None:
        if made := set(cache_listing()) - {source.file, f".{source.file}.lock"}:
            return made.pop()
        time.sleep(0.02)
    raise AssertionError(f"the download (exit status {child.poll()}) made no temporary file: {cache_listing()}")


def test_a_download_killed_mid_transfer_is_cleaned_up_by_the_next_one(tiny_source, tmp_path, mirror, monkeypatch):
    """kill -9 in mid-transfer leaves a temporary file; a download of another source meanwhile keeps
    it (its download still runs), the next download of the same source removes it and succeeds."""
    source, archive = tiny_source
    other_archive = make_archive(tmp_path / "made" / "other-1.0.tar.gz", "other-1.0", FILES)
    url = sources.GITHUB + "someone/other/archive/refs/tags/v1.0.tar.gz"
    other = sources.Source("other-1.0", url, sources.files_digest(other_archive), "MIT")
    monkeypatch.setitem(sources.SOURCES, other.name, other)
    put_on_mirror(mirror, source, archive)
    put_on_mirror(mirror, other, other_archive)
    sources.cache_folder().mkdir(parents=True)
    stalling = Scripted("application/gzip", archive.read_bytes(), stall_after=archive.stat().st_size // 2)
    try:
        args = [source.name, source.url, source.files_sha256, stalling.url]
        child = subprocess.Popen([sys.executable, "-c", DOWNLOAD, *args])
        try:
            temporary = wait_for_temporary_file(source, child)
            sources.locate(other.name, sources.Settings(mirror=mirror.url))
            assert temporary in cache_listing()  # the running download's file is kept
        finally:
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait() == -signal.SIGKILL
    finally:
        stalling.stop()
    assert temporary in cache_listing()  # what kill -9 leaves
    found = sources.locate(source.name, sources.Settings(mirror=mirror.url))
    assert found == sources.cache_folder() / source.file and sources.verify(source, found) == found
    assert cache_listing() == sorted([source.file, other.file, f".{source.file}.lock", f".{other.file}.lock"])


def test_two_downloads_of_one_source_at_once_fetch_it_once(tiny_source):
    """Two checkouts sharing the cache download one source at the same moment (issue 54): the second waits for
    the first's lock and takes its verified file; the server is asked once and no temporary file stays."""
    source, archive = tiny_source
    sources.cache_folder().mkdir(parents=True)
    body = archive.read_bytes()
    slow = Scripted("application/gzip", body, stall_after=len(body) // 2, finish=True)
    args = [source.name, source.url, source.files_sha256, slow.url]
    try:
        first = subprocess.Popen([sys.executable, "-c", DOWNLOAD, *args], stderr=subprocess.PIPE, text=True)
        wait_for_temporary_file(source, first)  # the first is mid-transfer
        second = subprocess.Popen([sys.executable, "-c", DOWNLOAD, *args], stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert second.poll() is None  # it cannot have the file yet
        slow.released.set()
        for download in (first, second):
            assert download.wait(60) == 0, download.stderr.read()[-2000:]
    finally:
        slow.stop()
    assert len(slow.requests) == 1
    assert cache_listing() == sorted([source.file, f".{source.file}.lock"])
    assert sources.verify(source, sources.cache_folder() / source.file)


def test_a_mirror_answering_a_page_says_what_it_sent_and_that_the_mirror_is_to_fix(tiny_source):
    source, _ = tiny_source
    page = b"<!DOCTYPE html><html><body>Please sign in</body></html>"
    login = Scripted("text/html; charset=utf-8", page)
    try:
        with pytest.raises(sources.SourceMissing) as refused:
            sources.locate(source.name, sources.Settings(mirror=login.url))
    finally:
        login.stop()
    message = str(refused.value)
    assert f"downloaded from {login.url}someone/tiny/archive/refs/tags/v1.0.tar.gz" in message
    assert "text/html" in message and "<!DOCTYPE html>" in message
    assert f"${sources.MIRROR_ENV}" in message and f"is {login.url}" in message
    assert str(sources.cache_folder()) not in message  # not the temporary file, which is gone
    assert cache_listing() == [f".{source.file}.lock"]


# --- patches


def test_genn_49s_cuda_13_patch_applies_to_its_tree(tmp_path):
    tree = sources.unpack("genn-4.9.0", genn_archive(), tmp_path)
    assert sources.patch("genn-4.9.0", tree) == ["src/genn/backends/cuda/optimiser.cc"]
    patched = (tree / "src/genn/backends/cuda/optimiser.cc").read_text()
    assert "#if CUDA_VERSION < 13000" in patched and "cuCtxCreate(&cuContext, NULL, 0, cuDevice)" in patched
    (tree / "src/genn/backends/cuda/optimiser.cc").write_text("// another GeNN\n")
    with pytest.raises(sources.SourceMissing, match="optimiser.cc does not hold the text to patch once"):
        sources.patch("genn-4.9.0", tree)
