"""Short, stable hashes of JSON-able content (specs, environment definitions, build keys)."""

from __future__ import annotations

import hashlib
import json


def canonical_hash(obj) -> str:
    """16 hex digits of the SHA-256 of obj as JSON with sorted keys: the same content, the same hash."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]
