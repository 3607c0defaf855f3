"""Ingestion: formats detected, stable ids and hashes, and every kind of bad input rejected alone."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from rag_assets.core.corpus.sources import (
    BUILTIN_PYTHON_REFERENCE,
    CollectionSpec,
    DocumentRejected,
    decode_document,
    ingest,
)
from rag_assets.core.corpus.tree import tree_problems
from rag_assets.core.corpus.tree_building import build_trees


def test_every_format_is_detected_and_ids_are_stable(corpus_dir: Path) -> None:
    spec = CollectionSpec("tiny", str(corpus_dir))
    first, second = ingest(spec), ingest(spec)
    assert first.rejections == []
    by_id = {d.doc_id: d for d in first.documents}
    assert sorted(by_id) == [
        "tiny/kettle.md",
        "tiny/pages.jsonl/p1",
        "tiny/pages.jsonl/p2",
        "tiny/pass.txt",
        "tiny/phone.json",
        "tiny/pond.html",
    ]
    assert {d.doc_id: d.format for d in first.documents} == {
        "tiny/kettle.md": "markdown",
        "tiny/pages.jsonl/p1": "html",
        "tiny/pages.jsonl/p2": "html",
        "tiny/pass.txt": "text",
        "tiny/phone.json": "manual_json",
        "tiny/pond.html": "html",
    }
    assert by_id["tiny/kettle.md"].title == "Kettle manual"
    assert by_id["tiny/pages.jsonl/p2"].title == "Tide"
    assert [(d.doc_id, d.content_hash) for d in first.documents] == [
        (d.doc_id, d.content_hash) for d in second.documents
    ]


def test_builtin_corpus_has_79_valid_trees() -> None:
    result = ingest(CollectionSpec("python-reference", BUILTIN_PYTHON_REFERENCE))
    assert len(result.documents) == 79 and not result.rejections
    built = build_trees(result.documents)
    assert not built.rejections
    for _, tree in built.trees:
        assert tree_problems(tree.nodes, tree.text) == []
        assert tree.content_count > 0


def test_bad_inputs_are_rejected_one_by_one_with_reasons(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "good.md").write_text("# Good\n\nA fine paragraph.\n")
    (folder / "empty.md").write_bytes(b"")
    (folder / "blank.txt").write_bytes(b"  \n\n ")
    (folder / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "latin1.md").write_bytes("# Caf\xe9\n\nna\xefve".encode("latin-1"))
    (folder / "huge.md").write_bytes(b"# Big\n\n" + b"word " * (11 * 1024 * 1024 // 5))
    (folder / "pages.jsonl").write_text('{"title": "ok", "text": "Fine."}\nnot json\n[1, 2]\n{"title": "no body"}\n')
    result = ingest(CollectionSpec("bad", str(folder)), max_document_mb=10)
    reasons = {r.uri.split("/")[-1]: r.reason for r in result.rejections}
    assert reasons["empty.md"] == "empty document (no text)"
    assert reasons["blank.txt"] == "empty document (no text)"
    assert reasons["binary.md"].startswith("binary file")
    assert reasons["huge.md"].startswith("file is 11.0 MB, over the 10 MB limit")
    assert reasons["pages.jsonl#line=2"].startswith("invalid JSON on line 2")
    assert reasons["pages.jsonl#line=3"] == "line 3 is not a JSON object"
    assert reasons["pages.jsonl#line=4"].startswith("line 4 has none of the fields")
    assert sorted(d.doc_id for d in result.documents) == ["bad/good.md", "bad/latin1.md", "bad/pages.jsonl/line-1"]
    assert next(d.text for d in result.documents if d.doc_id == "bad/latin1.md") == "# Caf\xe9\n\nna\xefve"
    assert all(r.stage == "ingest" for r in result.rejections)


def test_fifty_megabyte_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "c" / "big.html"
    big.parent.mkdir()
    with big.open("wb") as out:  # sparse: 50 MB on paper, nothing on disk
        out.truncate(50 * 1024 * 1024)
    result = ingest(CollectionSpec("c", str(big.parent)))
    assert [r.reason for r in result.rejections] == [
        "file is 50.0 MB, over the 32 MB limit (raise max_document_mb to accept it)"
    ]


def test_malformed_and_pathological_documents_still_make_valid_trees(tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "unclosed.html").write_text("<h1>Title<p>para one<p>para <b>two<li>item<h2>Next</h3><td>cell")
    (folder / "deep.html").write_text("<h1>Deep</h1>" + "<div>" * 10_000 + "bottom text" + "<ul><li>x" * 10_000)
    (folder / "deep.md").write_text("# Deep\n\n" + "- " * 10_000 + "item\n")  # 10,000 nested lists
    (folder / "quotes.md").write_text("# Q\n\n" + "> " * 10_000 + "deep quote\n")
    (folder / "headings.md").write_text("# A\n\n## B\n\n### C\n")
    (folder / "flat.txt").write_text("First paragraph.\n\nSecond paragraph.\n")
    result = ingest(CollectionSpec("odd", str(folder)))
    assert not result.rejections
    built = build_trees(result.documents)
    assert not built.rejections
    trees = {doc.doc_id.split("/")[-1]: tree for doc, tree in built.trees}
    for name, tree in trees.items():
        assert tree_problems(tree.nodes, tree.text) == [], name
    assert "bottom text" in trees["deep.html"].text
    assert "deep quote" in trees["quotes.md"].text
    assert max(n.depth for n in trees["deep.md"].nodes) <= 20  # list nesting clamped
    assert "item" in trees["deep.md"].text
    assert all(n.kind == "structure" for n in trees["headings.md"].nodes)
    assert {n.depth for n in trees["flat.txt"].nodes[1:]} == {1}


def test_a_parse_failure_is_a_rejection_not_a_crash(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "broken.json").write_text('{"section_0": {"html": "not a list"}}')
    (folder / "fine.md").write_text("# Fine\n\ntext\n")
    result = ingest(CollectionSpec("m", str(folder), format="auto"))
    built = build_trees([*result.documents])
    names = [d.doc_id for d, _ in built.trees]
    rejected = [(r.uri.split("/")[-1], r.stage) for r in result.rejections + built.rejections]
    assert "m/fine.md" in names
    assert ("broken.json", "parse") in rejected or ("broken.json", "ingest") in rejected


def test_a_page_record_whose_title_is_its_whole_page_gets_the_pages_own_title(tmp_path: Path) -> None:
    """One real nq_wiki record carries its 59,584-character page in "title": as a title it would
    head every heading path and put 100,000-token prompts in front of the reader."""
    import json

    page = "<H1> Game of Thrones ( season 7 ) </H1> <P> Season seven premiered on July 16 , 2017 . </P> " * 200
    folder = tmp_path / "nq"
    folder.mkdir()
    (folder / "pages.jsonl").write_text(
        json.dumps({"doc_id": "nq-08", "title": page, "html": page})
        + "\n"
        + json.dumps({"doc_id": "nq-09", "title": "Two\nlines", "html": "<P>no heading</P>"})
        + "\n"
    )
    by_id = {d.doc_id: d for d in ingest(CollectionSpec("nq", str(folder))).documents}
    assert by_id["nq/pages.jsonl/nq-08"].title == "Game of Thrones ( season 7 )"
    assert by_id["nq/pages.jsonl/nq-09"].title == "nq-09"
    trees = build_trees(list(by_id.values()))
    assert all(len(" > ".join(n.heading_path)) < 400 for _, tree in trees.trees for n in tree.nodes)


def test_a_collection_of_rejected_files_says_so_in_one_line(tmp_path: Path) -> None:
    from rag_assets.core.corpus.sources import CollectionSpec, ingest

    for index in range(7):
        (tmp_path / f"bin{index}.md").write_bytes(b"\x00binary")
    spec = CollectionSpec("allbad", str(tmp_path))
    line = ingest(spec).nothing_readable(spec)
    binary = "binary file (NUL bytes in the first 8 KB), not a text document"
    shown = "; ".join(f"{tmp_path / f'bin{index}.md'}: {binary}" for index in range(5))
    assert (
        line
        == f"collection allbad has no readable document: 7 rejected ({shown}; and 2 more (the step's log lists them))"
    )
    empty = tmp_path / "none"
    empty.mkdir()
    nothing = CollectionSpec("nothing", str(empty))
    assert ingest(nothing).nothing_readable(nothing) == f"collection nothing has no document: no file under {empty}"
    (tmp_path / "good.md").write_text("# Good\n\nText.\n")
    assert ingest(spec).nothing_readable(spec) is None


TEXT = "# Le café\n\nLa crème brûlée est servie à 80 °C. Les élèves préfèrent le thé après le dîner.\n"


@pytest.mark.parametrize(
    "encoded",
    [
        TEXT.encode("utf-8"),
        codecs.BOM_UTF8 + TEXT.encode("utf-8"),
        TEXT.encode("utf-16"),  # with its BOM
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
        TEXT.encode("utf-16-le"),  # no BOM
        TEXT.encode("utf-16-be"),
        TEXT.encode("utf-32"),
        TEXT.encode("utf-32-le"),
        TEXT.encode("utf-32-be"),
        TEXT.encode("cp1252"),
    ],
    ids=[
        "utf8",
        "utf8-bom",
        "utf16-bom",
        "utf16be-bom",
        "utf16le",
        "utf16be",
        "utf32-bom",
        "utf32le",
        "utf32be",
        "cp1252",
    ],
)
def test_text_in_any_unicode_encoding_is_read(encoded: bytes) -> None:
    assert decode_document(encoded) == TEXT


def test_a_utf16_file_with_a_bom_is_ingested(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_bytes(TEXT.encode("utf-16"))
    result = ingest(CollectionSpec("enc", str(tmp_path)))
    assert result.rejections == []
    [doc] = result.documents
    assert (doc.format, doc.title, doc.text) == ("markdown", "Le café", TEXT)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file (NUL bytes in the first 8 KB), not a text document"),
        (bytes(range(256)) * 8, "binary file (NUL bytes in the first 8 KB), not a text document"),
        (b"\xff\xfe\x00binary", "binary file (NUL bytes in the first 8 KB), not a text document"),
        ("   \n".encode("utf-16"), "empty document (no text)"),
    ],
    ids=["png", "all-bytes", "bom-then-garbage", "utf16-blank"],
)
def test_only_binary_or_blank_bytes_are_rejected(data: bytes, reason: str) -> None:
    with pytest.raises(DocumentRejected) as raised:
        decode_document(data)
    assert str(raised.value) == reason


def test_binary_bytes_that_read_as_cjk_utf16_are_still_binary() -> None:
    with pytest.raises(DocumentRejected, match=r"^binary file"):
        decode_document(b"\x00\x01\x02 not text")
