"""benchmarks.stored_layout_changes on a real catalogue in tmp_path: the trees a collection's
stored PDF layouts give, and the comparison of two readers' trees."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from benchmarks.stored_layout_changes import compare, stored_trees
from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table
from tests.unit.test_parsers_pdf import make_pdf

pytestmark = pytest.mark.integration


def test_stored_layouts_give_the_trees_and_the_changes_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    header = [(72, 100, 10, "Feature", True), (250, 100, 10, "Basic", True), (330, 100, 10, "Pro", True)]
    rows = [(72, 114, 10, "Audit log", False), (330, 114, 10, "Yes", False)]
    rows += [(72, 128, 10, "Phone support", False), (250, 128, 10, "Yes", False)]
    page = [(72, 60, 14, "Plans", True), *header, *rows]
    (folder / "plans.pdf").write_bytes(make_pdf([page]))
    (folder / "notes.md").write_text("# Notes\n\nNot a PDF: left out.\n")
    catalogue = tmp_path / "catalogue.duckdb"
    result = ingest(CollectionSpec("docs", str(folder)))
    with duckdb.connect(str(catalogue)) as con:
        replace_collection(con, "docs", {"source_documents": documents_table(result.documents)})

    now = stored_trees(catalogue, "docs")
    assert list(now) == ["docs/plans.pdf"]
    assert ("table_row", "Audit log | Pro: Yes") in now["docs/plans.pdf"]
    assert ("table_row", "Phone support | Basic: Yes") in now["docs/plans.pdf"]

    # a reader that joined the cells as they came (the rows' marks shifted left)
    before = {
        "docs/plans.pdf": [
            ("title", "Plans (plans)"),
            ("table_row", "Audit log | Yes"),
            ("table_row", "Phone support | Yes"),
        ]
    }
    assert compare(before, now, show=1) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("1 PDFs, 1 trees changed")
    assert "docs/plans.pdf: -Audit log | Yes" in printed
    assert compare(now, now, show=1) == 0
