"""What changed in a collection between two materializations, document by document: added,
changed (old -> new hash) and deleted documents. One vocabulary everywhere (metadata, logs, the
CLI's summary): `added`, `changed`, `deleted`, `unchanged`."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

from rag_assets.core.tables import markdown_table

ADDED, CHANGED, DELETED, UNCHANGED = "added", "changed", "deleted", "unchanged"
_ORDER = {ADDED: 0, CHANGED: 1, DELETED: 2}


@dataclass(frozen=True, slots=True)
class DocumentChange:
    doc_id: str
    change: str  # added | changed | deleted
    old_hash: str | None
    new_hash: str | None

    def to_dict(self) -> dict[str, str | None]:
        return asdict(self)


def document_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[DocumentChange]:
    """The documents added, changed or deleted from `old` to `new` (doc_id -> hash), in that
    order, each by doc id; unchanged documents are not listed."""
    changes = [DocumentChange(d, ADDED, None, new[d]) for d in set(new) - set(old)]
    changes += [DocumentChange(d, CHANGED, old[d], new[d]) for d in set(old) & set(new) if old[d] != new[d]]
    changes += [DocumentChange(d, DELETED, old[d], None) for d in set(old) - set(new)]
    return sorted(changes, key=lambda c: (_ORDER[c.change], c.doc_id))


def passage_document_hashes(passage_pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """doc_id -> a hash of the document's (passage id, content hash) pairs (the document of a
    passage id is its part before `#`): equal hashes, the same passages."""
    by_doc: dict[str, list[str]] = defaultdict(list)
    for passage_id, content_hash in sorted(passage_pairs):
        by_doc[passage_id.split("#", 1)[0]].append(f"{passage_id}:{content_hash}")
    return {doc: hashlib.sha256("\n".join(items).encode()).hexdigest()[:16] for doc, items in by_doc.items()}


def change_counts(changes: Sequence[DocumentChange], documents_now: int) -> dict[str, int]:
    """added / changed / deleted / unchanged document counts (unchanged: of the `documents_now`)."""
    counts = Counter(c.change for c in changes)
    unchanged = documents_now - counts[ADDED] - counts[CHANGED]
    return {ADDED: counts[ADDED], CHANGED: counts[CHANGED], DELETED: counts[DELETED], UNCHANGED: unchanged}


def change_summary(counts: Mapping[str, int]) -> str:
    """'1 added, 2 changed, 0 deleted, 5 unchanged'."""
    return ", ".join(f"{n} {word}" for word, n in counts.items())


def short_hash(value: str | None) -> str:
    return value[:12] if value else "-"


def changes_markdown(
    changes: Sequence[DocumentChange], limit: int = 100, *, hash_label: str = "content hash (old → new)"
) -> str:
    """The changes as a Markdown table (document, change, old hash -> new hash), or a sentence."""
    if not changes:
        return "no document added, changed or deleted"
    rows = [(c.doc_id, c.change, f"{short_hash(c.old_hash)} → {short_hash(c.new_hash)}") for c in changes[:limit]]
    more = f"\n\n… and {len(changes) - limit} more" if len(changes) > limit else ""
    return markdown_table(["document", "change", hash_label], rows) + more
