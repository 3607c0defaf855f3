"""Is a document's source still what was indexed? Re-reads the source (a file, one record of a
page JSONL file, a built-in topic) and hashes it the way ingestion does, so `rag trace` notices
an edited or deleted file before the next re-index does."""

from __future__ import annotations

from pathlib import Path

from rag_assets.core.corpus.sources import SourceDocument, content_hash, page_records

UNCHANGED, CHANGED, GONE, UNKNOWN = "unchanged", "changed", "gone", "unknown"
_BUILTIN_PREFIX = "pydoc_data.topics#"
_LINE = "#line="


def current_source_hash(uri: str) -> str | None:
    """The content hash the source at `uri` would get if ingested now; None if it is gone."""
    if uri.startswith(_BUILTIN_PREFIX):
        from pydoc_data.topics import topics

        text = topics.get(uri[len(_BUILTIN_PREFIX) :])
        return None if text is None else content_hash(text.encode("utf-8"))
    path, _, line = uri.partition(_LINE)
    file = Path(path)
    if not file.is_file():
        return None
    if not line:
        return content_hash(file.read_bytes())
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
    number = int(line) if line.isdigit() else 0
    if not 1 <= number <= len(lines):
        return None
    record = next(iter(page_records("check", file, "", lines[number - 1])), None)
    return record.content_hash if isinstance(record, SourceDocument) else None


def source_state(uri: str | None, recorded_hash: str | None) -> str:
    """unchanged | changed | gone | unknown (no uri or no recorded hash to compare with)."""
    if not uri or not recorded_hash:
        return UNKNOWN
    try:
        current = current_source_hash(uri)
    except OSError:
        return GONE
    if current is None:
        return GONE
    return UNCHANGED if current == recorded_hash else CHANGED
