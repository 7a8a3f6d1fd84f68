"""Source archives of packages that are not on a package index (GeNN), named by an environment
file's `# archive: <file> sha256=<hex>` line (envs/pygenn.yaml).

An archive is looked up by its file name in one folder: $SNNBENCH_THIRD_PARTY (the workflow's config
key `third_party` sets it), else the checkout's ignored third_party/ (scripts/prepare_gpu_machine.sh
fills it). Its SHA-256 is part of the environment's key, never its path: the same archive anywhere
makes the same environment, and a file whose checksum differs is refused.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from snnbench import hashing
from snnbench.paths import REPO

FOLDER_ENV = "SNNBENCH_THIRD_PARTY"
DEFAULT_FOLDER = REPO / "third_party"
# `# archive: <file> sha256=<hex>` (a Python package: pip installs it) or with ` make` (a source tree
# built in place with make, kept in the environment as <prefix>/<TREE>: GeNN 4 for Brian2GeNN).
ARCHIVE_LINE = re.compile(r"^#\s*archive:\s*(\S+)\s+sha256=([0-9a-f]{64})(\s+make)?\s*$")
TREE = "source-tree"
# Edits to a `make` archive's tree before it is built: (file, text, replacement). GeNN 4.9's CUDA
# backend calls cuCtxCreate with CUDA 12's three arguments; CUDA 13 takes four (a params pointer
# second). The guard is GeNN 5.4's own (src/genn/backends/cuda/optimiser.cc), so the tree builds
# with either toolkit; a CPU-only build does not compile the file.
CU_CTX_CREATE = "    CHECK_CU_ERRORS(cuCtxCreate(&cuContext, 0, cuDevice));\n"
PATCHES = {
    "genn-4.9.0.tar.gz": [
        (
            "src/genn/backends/cuda/optimiser.cc",
            CU_CTX_CREATE,
            "#if CUDA_VERSION < 13000\n"
            + CU_CTX_CREATE
            + "#else\n    CHECK_CU_ERRORS(cuCtxCreate(&cuContext, NULL, 0, cuDevice));\n#endif\n",
        )
    ]
}


class ArchiveMissing(RuntimeError):
    """The archive is not where it is looked for, or its checksum differs; the message says what to do."""


def archive_line(lines: list[str], where: str) -> dict | None:
    """The archive an environment file names ({file, sha256}), None if it names none."""
    found = [m.groups() for line in lines if (m := ARCHIVE_LINE.match(line.strip()))]
    if len(found) > 1:
        raise ArchiveMissing(f"{where}: more than one `# archive:` line; one is allowed")
    if not found:
        return None
    file, digest, make = found[0]
    return {"file": file, "sha256": digest, **({"build": "make"} if make else {})}


def use_config(config: dict) -> None:
    """The workflow's config key `third_party` names the folder for this run and its jobs."""
    if config.get("third_party"):
        os.environ[FOLDER_ENV] = str(Path(config["third_party"]).expanduser().absolute())


def folder() -> Path:
    return Path(os.environ.get(FOLDER_ENV) or DEFAULT_FOLDER).expanduser().absolute()


def locate(archive: dict) -> Path:
    """The archive's file, its checksum checked."""
    path = folder() / archive["file"]
    if not path.is_file():
        raise ArchiveMissing(
            f"{archive['file']} is not in {path.parent}: put it there, or set ${FOLDER_ENV} (or the config key "
            f"third_party) to the folder that holds it (docs/genn.md says where it comes from)"
        )
    found = hashing.file_sha256(path)
    if found != archive["sha256"]:
        raise ArchiveMissing(f"{path}: SHA-256 {found}, but the environment file names {archive['sha256']}")
    return path


def patch(archive: dict, tree: Path) -> list[str]:
    """Apply the archive's PATCHES to its unpacked tree; the files patched. A text that is not found
    once is an error: the archive is not the one the patch was written for."""
    patched = []
    for relative, text, replacement in PATCHES.get(archive["file"], []):
        path = tree / relative
        content = path.read_text()
        if content.count(text) != 1:
            raise ArchiveMissing(f"{archive['file']}: {relative} does not hold the text to patch once")
        path.write_text(content.replace(text, replacement))
        patched.append(relative)
    return patched


def built_tree(tree: Path) -> dict:
    """A source tree built in place (GeNN 4): where it is, its version and the backends its make built."""
    version = tree / "version.txt"
    libraries = (tree / "lib").glob("libgenn_*")
    return {
        "path": str(tree),
        "version": version.read_text().strip() if version.exists() else None,
        "backends": sorted({p.name.split(".")[0].removeprefix("libgenn_") for p in libraries}),
    }
