"""Downloads into a cache that several processes, and several users of a group, share
(snnbench.environments.sources): one download of a file at a time (a lock file beside it), into a
temporary file that the caller verifies and then renames to the file's name.

Every file and folder is created as any file is: mode 0666 (0777) less the process's umask, so a
cache on a group's folder (setgid bit, umask 002) stays readable and writable by the group.

A download that dies (kill -9, a lost node) leaves its temporary file; the next download removes
it. A temporary file is stale exactly when no process holds its file's lock: the kernel releases a
lock when its holder dies, however it dies, and a download writes its temporary file only while it
holds the lock. A PID in the name could not tell a live download on another host of a shared file
system, nor survive the PID's reuse; an age limit could remove a slow download's file.

Standard library only: `python -m snnbench.environments.sources` runs before any environment exists.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import os
import re
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# A download's temporary file: `.<file>.<12 hex digits>.part`, or `.<file>.<8 characters>` as
# tempfile named them before (so that those left by older versions go too).
PART = re.compile(r"^\.(?P<file>[^/]+\.tar\.gz)\.(?:[0-9a-f]{12}\.part|[a-z0-9_]{8})$")
HEAD_BYTES = 64  # of an answer, to say what a server sent that is not an archive


@dataclass(frozen=True)
class Download:
    """A finished download: its temporary file and what the server said it sent."""

    path: Path
    content_type: str
    size: int
    head: bytes

    def sent(self) -> str:
        """What the server sent, in words: its Content-Type, size and first bytes."""
        return f"Content-Type {self.content_type or '(none)'}, {self.size} bytes beginning {self.head!r}"


def lock_path(cache: Path, file: str) -> Path:
    return cache / f".{file}.lock"


@contextlib.contextmanager
def locked(cache: Path, file: str, wait: bool = True) -> Iterator[bool]:
    """Hold the lock of cache/file's download: True once held; not waiting, False where another
    process holds it. The lock file is opened for writing (NFS emulates flock by write locks)."""
    descriptor = os.open(lock_path(cache, file), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)


def remove_stale(cache: Path, held: str) -> list[Path]:
    """Remove the temporary files of downloads that died; returns those removed. The caller holds
    the lock of `held`'s download, so all of its temporary files are stale; another file's are stale
    where no process holds its lock. What cannot be removed (another user's, say) is left."""
    parts: dict[str, list[Path]] = {}
    for path in cache.iterdir():
        if match := PART.match(path.name):
            parts.setdefault(match["file"], []).append(path)
    removed = []
    for file, paths in parts.items():
        with contextlib.ExitStack() as stack:
            try:
                if file != held and not stack.enter_context(locked(cache, file, wait=False)):
                    continue  # a download running now, in another process
            except OSError:
                continue  # a lock this user cannot open: whether it is held cannot be told
            for path in paths:
                with contextlib.suppress(OSError):
                    path.unlink()
                    removed.append(path)
    return removed


class DownloadFailed(Exception):
    """The URL could not be read; the message is why."""


def into_cache(url: str, target: Path, timeout_s: float, accept: Callable[[Path, Download | None], object]) -> Path:
    """target, downloaded from `url` once per machine: a second process waits for the first. `accept(path,
    download)` raises where a file is not the one asked for (download: None for a file already there);
    a download it refuses is not kept, one it accepts is renamed to target."""
    cache = target.parent
    cache.mkdir(parents=True, exist_ok=True)
    with locked(cache, target.name):
        if target.is_file():
            accept(target, None)
            return target
        remove_stale(cache, target.name)
        got = download(url, cache, target.name, timeout_s)
        try:
            accept(got.path, got)
        except BaseException:
            got.path.unlink(missing_ok=True)
            raise
        os.replace(got.path, target)
    return target


def download(url: str, cache: Path, file: str, timeout_s: float) -> Download:
    """`url` downloaded into a new temporary file beside cache/file, whose lock the caller holds.
    DownloadFailed where the URL cannot be read (an OSError where the cache cannot be written);
    leaves no temporary file then."""
    part = cache / f".{file}.{secrets.token_hex(6)}.part"
    size, head = 0, b""
    try:
        with _opened(url, timeout_s) as response:
            content_type = response.headers.get("Content-Type", "")
            # O_EXCL: a new file, created with the umask's mode (tempfile's would be 0600).
            with open(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as out:
                while block := _read(response):
                    head = head or block[:HEAD_BYTES]
                    size += out.write(block)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return Download(part, content_type, size, head)


def _opened(url: str, timeout_s: float):
    try:
        return urllib.request.urlopen(url, timeout=timeout_s)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as error:
        raise DownloadFailed(str(getattr(error, "reason", None) or error)) from None


def _read(response) -> bytes:
    try:
        return response.read(1 << 20)
    except (http.client.HTTPException, OSError) as error:  # a timeout, a connection closed early
        raise DownloadFailed(str(error) or type(error).__name__) from None
