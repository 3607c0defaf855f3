"""Cheap fingerprints of a collection's sources, so a sensor can tell what changed."""

from __future__ import annotations

import hashlib
import sys

from rag_assets.core.corpus.discovery import discover_files
from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE, CollectionSpec


def source_fingerprint(spec: CollectionSpec) -> dict[str, str]:
    """path -> "mtime_ns:size" for every file of the collection (stat only, no reading).

    The built-in corpus changes only with the Python version that ships it.
    """
    if spec.path == BUILTIN_PYTHON_REFERENCE:
        return {BUILTIN_PYTHON_REFERENCE: sys.version}
    try:
        files = discover_files(spec.path)
    except FileNotFoundError:
        return {}
    out: dict[str, str] = {}
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            continue
        out[str(file)] = f"{stat.st_mtime_ns}:{stat.st_size}"
    return out


def fingerprint_digest(fingerprint: dict[str, str]) -> str:
    payload = "\n".join(f"{k}\t{v}" for k, v in sorted(fingerprint.items()))
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
