"""Word files that would exhaust the machine are rejected before they are read, with the reason
in plain words: archives that expand too far, too many parts, compression ratios only zip bombs
reach, XML that declares entities, content nested past the XML depth limit, and a document that
takes longer than the per-document limit to read."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import docx
import pytest

from rag_assets.core.corpus.parsers.archive_limits import MIB, ArchiveLimits
from rag_assets.core.corpus.parsers.docx import extract_docx
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.sources import CollectionSpec, ingest

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def word_file(body: str, *, head: str = "", extra: dict[str, bytes] | None = None) -> bytes:
    """A .docx written by python-docx whose document.xml is replaced by `head` + a document of `body`."""
    buffer = io.BytesIO()
    docx.Document().save(buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    parts["word/document.xml"] = f"{head}<w:document {W}><w:body>{body}</w:body></w:document>".encode()
    parts.update(extra or {})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)
    return out.getvalue()


def paragraphs(count: int, text: str = "The kettle boils water for tea.") -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>" * count


def test_an_archive_expanding_past_the_limit_is_refused_naming_sizes() -> None:
    data = word_file(paragraphs(40_000))  # about 3 MB of XML
    with pytest.raises(ParseError, match=r"would expand to 3 MB, over the 1 MB limit \(a zip bomb"):
        extract_docx(data, ArchiveLimits(max_expanded_bytes=MIB))
    assert extract_docx(data).plain_text.count("kettle") == 40_000  # within the default limits
    with pytest.raises(ParseError, match=r"XML would expand to 3 MB, over the 2 MB limit"):
        extract_docx(data, ArchiveLimits(max_xml_bytes=2 * MIB))


def test_a_compression_ratio_only_a_bomb_reaches_is_refused() -> None:
    padding = {"word/media/blank.bin": b"\0" * (4 * MIB)}  # zeros compress about 1000 to 1
    with pytest.raises(ParseError, match=r"part word/media/blank.bin is compressed \d+ to 1, more than the 400"):
        extract_docx(word_file(paragraphs(1), extra=padding))


def test_too_many_parts_are_refused() -> None:
    extra = {f"word/media/{i}.bin": b"x" for i in range(30)}
    with pytest.raises(ParseError, match=r"holds \d+ parts, more than the 20 allowed"):
        extract_docx(word_file(paragraphs(1), extra=extra), ArchiveLimits(max_entries=20))


def test_xml_entities_are_refused_before_parsing() -> None:
    laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>'
    with pytest.raises(ParseError, match=r"part word/document.xml declares a DTD \(entity definitions"):
        extract_docx(word_file(paragraphs(1, "&lol2;"), head=laughs))


def test_tables_nested_past_the_depth_limit_are_refused_in_plain_words() -> None:
    cell = paragraphs(1)
    for _ in range(100):  # three XML levels per table: 300 levels
        cell = f"<w:tbl><w:tr><w:tc>{cell}</w:tc></w:tr></w:tbl>"
    with pytest.raises(ParseError) as refused:
        extract_docx(word_file(cell))
    assert "nests its content more than 256 levels deep (tables inside tables" in str(refused.value)
    assert "XML_PARSE_HUGE" not in str(refused.value)
    shallow = cell
    for _ in range(95):  # five nested tables read as before
        shallow = shallow.split("<w:tc>", 1)[1].rsplit("</w:tc>", 1)[0]
    assert "Before the tables." in extract_docx(word_file(paragraphs(1, "Before the tables.") + shallow)).plain_text


def test_a_document_slower_than_the_time_limit_is_refused() -> None:
    data = word_file(paragraphs(3_000))
    with pytest.raises(ParseError, match=r"reading the .docx file took over 0 s, the limit per document"):
        extract_docx(data, ArchiveLimits(max_parse_seconds=0))


def test_the_reasons_reach_the_rejected_documents(tmp_path: Path) -> None:
    (tmp_path / "bomb.docx").write_bytes(word_file(paragraphs(1), extra={"word/media/z.bin": b"\0" * (4 * MIB)}))
    (tmp_path / "ok.docx").write_bytes(word_file(paragraphs(3)))
    result = ingest(CollectionSpec("docs", str(tmp_path)))
    assert [Path(d.uri).name for d in result.documents] == ["ok.docx"]
    (rejection,) = result.rejections
    assert Path(rejection.uri).name == "bomb.docx" and "a zip bomb" in rejection.reason
