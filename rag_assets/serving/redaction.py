"""No server path leaves the service: sources are named relative to their collection (as their
document ids name them), and absolute paths in error messages are cut to their last part."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

# an absolute path of two or more parts (not a URL's path: no scheme or host before it)
_ABSOLUTE = re.compile(r"(?<![\w:/.])/(?:[^\s/'\"`,;:()]+/)+([^\s/'\"`,;:()]+)")


def relative_source(uri: str | None, doc_id: str, collection: str) -> str | None:
    """`uri` without the server's folders: the tail of its path that the document id names
    (`/srv/docs/a/b.md` of doc `c/a/b.md` -> `a/b.md`), else the file's name; `#...` kept."""
    if not uri:
        return uri
    path, mark, fragment = uri.partition("#")
    if not path.startswith("/"):
        return uri
    rel = doc_id.removeprefix(f"{collection}/")
    parts = PurePosixPath(path).parts[1:]
    for start in range(len(parts)):
        tail = "/".join(parts[start:])
        if rel == tail or rel.startswith(f"{tail}/"):
            return tail + mark + fragment
    return PurePosixPath(path).name + mark + fragment


def public_document(document: dict[str, Any]) -> dict[str, Any]:
    return {**document, "uri": relative_source(document.get("uri"), document["doc_id"], document["collection"])}


def public_trace(trace: dict[str, Any]) -> dict[str, Any]:
    collection = trace["answer"]["collection"]
    sources = [{**s, "uri": relative_source(s.get("uri"), s["doc_id"], collection)} for s in trace["sources"]]
    return {**trace, "sources": sources}


def without_paths(message: str) -> str:
    """`message` with every absolute path cut to its last part (`…/name`)."""
    return _ABSOLUTE.sub(lambda m: f"…/{m.group(1)}", message)
