"""Short, stable hashes of JSON-able content (specs, environment definitions, build keys), and files' digests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def canonical_hash(obj) -> str:
    """16 hex digits of the SHA-256 of obj as JSON with sorted keys: the same content, the same hash."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
