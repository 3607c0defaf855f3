"""Per-document changes between two materializations: added, changed (old -> new hash), deleted."""

from __future__ import annotations

from rag_assets.core.corpus.document_changes import (
    change_counts,
    changes_markdown,
    document_changes,
    passage_document_hashes,
)


def test_added_changed_and_deleted_documents_with_their_hashes() -> None:
    old = {"c/a.md": "aaaa", "c/b.md": "bbbb", "c/gone.md": "gggg"}
    new = {"c/a.md": "aaaa", "c/b.md": "b222", "c/new.md": "nnnn"}
    changes = document_changes(old, new)
    assert [(c.doc_id, c.change, c.old_hash, c.new_hash) for c in changes] == [
        ("c/new.md", "added", None, "nnnn"),
        ("c/b.md", "changed", "bbbb", "b222"),
        ("c/gone.md", "deleted", "gggg", None),
    ]
    assert change_counts(changes, len(new)) == {"added": 1, "changed": 1, "deleted": 1, "unchanged": 1}
    table = changes_markdown(changes)
    assert "| c/b.md | changed | bbbb → b222 |" in table and "| c/gone.md | deleted | gggg → - |" in table
    assert changes_markdown([]) == "no document added, changed or deleted"


def test_passages_are_grouped_by_their_document() -> None:
    hashes = passage_document_hashes([("c/a.md#1", "x"), ("c/a.md#4", "y"), ("c/b.md#1", "z")])
    assert sorted(hashes) == ["c/a.md", "c/b.md"]
    moved = passage_document_hashes([("c/a.md#1", "x"), ("c/a.md#4", "y2"), ("c/b.md#1", "z")])
    assert moved["c/a.md"] != hashes["c/a.md"] and moved["c/b.md"] == hashes["c/b.md"]
