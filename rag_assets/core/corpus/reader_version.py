"""The version of what turns a file into a document and its tree: the reading code and its caps.

Reading a long PDF is the slow part of indexing (10,206 pages of filings: minutes), and a
re-index after one file changed should not read the other files again. A document whose bytes
(content hash) and reader version are both what the catalogue holds keeps its stored text,
title and tree. The version hashes the source of this package (`core/corpus`: the parsers, the
tree builder, the title rules) and the caps a document was read under, so any change to how
documents are read, or to a cap that could now reject one, reads every document again.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

_CODE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def _code_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(_CODE.rglob("*.py")):
        digest.update(path.relative_to(_CODE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def reader_version(**caps: object) -> str:
    """16 hex digits naming this reading code under these caps (`max_document_pages=2000`, ...)."""
    settings = json.dumps(caps, sort_keys=True, default=str)
    return hashlib.sha256(f"{_code_digest()}\n{settings}".encode()).hexdigest()[:16]
