"""Slides, workbooks and e-books that would exhaust the machine are rejected before they are read,
under the same limits as Word files (archive_limits.py): a zip bomb in each format is refused
within 5 s and 300 MB, as are entity-declaring XML, too many parts and damaged files."""

from __future__ import annotations

import io
import time
import tracemalloc
import zipfile
from pathlib import Path

import openpyxl
import pptx
import pytest

from rag_assets.core.corpus.parsers.archive_limits import MIB, ArchiveLimits
from rag_assets.core.corpus.parsers.epub import extract_epub
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.pptx import extract_pptx
from rag_assets.core.corpus.parsers.xlsx import extract_xlsx
from rag_assets.core.corpus.sources import CollectionSpec, ingest

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
pytestmark = pytest.mark.unit
BOMB_MB = 1024  # one part of zeros that expands to 1 GB from about 1 MB


def deck() -> bytes:
    out = io.BytesIO()
    presentation = pptx.Presentation()
    presentation.slides.add_slide(presentation.slide_layouts[0]).shapes.title.text = "Hello"
    presentation.save(out)
    return out.getvalue()


def workbook() -> bytes:
    out = io.BytesIO()
    book = openpyxl.Workbook()
    book.active.append(["Item", "Price"])
    book.active.append(["Tea", 3])
    book.save(out)
    return out.getvalue()


def ebook() -> bytes:
    return (SAMPLES / "winter-sports.epub").read_bytes()


def with_parts(
    data: bytes, path: Path, extra: dict[str, bytes] | None = None, bomb: str | None = None, bomb_mb: int = BOMB_MB
) -> Path:
    """`data`'s archive written to `path` with `extra` parts, and a part `bomb` of `bomb_mb` MB of
    zeros streamed in (never held in memory)."""
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, source.read(name))
        for name, content in (extra or {}).items():
            target.writestr(name, content)
        if bomb:
            zeros = b"\0" * MIB
            with target.open(bomb, "w", force_zip64=True) as part:
                for _ in range(bomb_mb):
                    part.write(zeros)
    return path


FORMATS = {
    "pptx": (deck, extract_pptx, "ppt/media/image9.bin", "ppt/slides/slide1.xml"),
    "xlsx": (workbook, extract_xlsx, "xl/media/image9.bin", "xl/worksheets/sheet1.xml"),
    "epub": (ebook, extract_epub, "OEBPS/blank.bin", "META-INF/container.xml"),
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_zip_bomb_is_refused_within_5_seconds_and_300_mb(tmp_path: Path, fmt: str) -> None:
    make, extract, bomb, _ = FORMATS[fmt]
    path = with_parts(make(), tmp_path / f"bomb.{fmt}", bomb=bomb)
    assert path.stat().st_size < 3 * MIB
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(
            ParseError, match=rf"the \.{fmt} file would expand to 10\d\d MB, over the 64 MB limit \(a zip bomb"
        ):
            extract(path.read_bytes())
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 5
    assert peak < 300 * MIB


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_compression_ratio_only_a_bomb_reaches_is_refused(fmt: str) -> None:
    make, extract, bomb, _ = FORMATS[fmt]
    data = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make())) as source, zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            target.writestr(name, source.read(name))
        target.writestr(bomb, b"\0" * (4 * MIB))
    with pytest.raises(ParseError, match=rf"part {bomb} is compressed \d+ to 1, more than the 400"):
        extract(data.getvalue())


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_too_many_parts_and_entity_declarations_are_refused(tmp_path: Path, fmt: str) -> None:
    make, extract, _, xml_part = FORMATS[fmt]
    many = with_parts(make(), tmp_path / f"many.{fmt}", {f"extra/{i}.bin": b"x" for i in range(40)})
    with pytest.raises(ParseError, match=r"holds \d+ parts, more than the 30 allowed"):
        extract(many.read_bytes(), ArchiveLimits(max_entries=30))
    with zipfile.ZipFile(io.BytesIO(make())) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    laughs = b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>'
    parts[xml_part] = laughs + parts[xml_part].split(b"?>", 1)[-1]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for name, content in parts.items():
            target.writestr(name, content)
    with pytest.raises(ParseError, match=rf"part {xml_part} declares a DTD \(entity definitions"):
        extract(out.getvalue())


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_damaged_files_are_rejected_with_the_reason(tmp_path: Path, fmt: str) -> None:
    make = FORMATS[fmt][0]
    (tmp_path / f"cut.{fmt}").write_bytes(make()[:2000])
    (tmp_path / f"text.{fmt}").write_bytes(b"just some words, not an archive")
    (tmp_path / f"bomb.{fmt}").write_bytes(
        with_parts(make(), tmp_path / "b.zip", bomb="x/zeros.bin", bomb_mb=128).read_bytes()
    )
    (tmp_path / "b.zip").unlink()
    result = ingest(CollectionSpec("docs", str(tmp_path)))
    assert result.documents == []
    reasons = {Path(r.uri).name: r.reason for r in result.rejections}
    assert "damaged or incomplete" in reasons[f"cut.{fmt}"]
    assert reasons[f"text.{fmt}"].startswith(f"not a .{fmt} file (not a zip archive")
    assert "a zip bomb" in reasons[f"bomb.{fmt}"]


def test_an_encrypted_workbook_is_named_as_such() -> None:
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 512  # the header of an encrypted (or old .xls) workbook
    with pytest.raises(ParseError, match=r"an encrypted workbook or an old binary \.xls"):
        extract_xlsx(ole)


def test_a_very_large_sheet_is_read_to_the_cap_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag_assets.core.corpus.parsers.xlsx as xlsx

    monkeypatch.setattr(xlsx, "MAX_SHEET_ROWS", 50)
    book = openpyxl.Workbook()
    book.active.title = "Readings"
    book.active.append(["Day", "Reading"])
    for day in range(1, 200):
        book.active.append([f"day {day}", day * 2])
    out = io.BytesIO()
    book.save(out)
    rows = __import__("json").loads(xlsx.extract_xlsx(out.getvalue())[0])["blocks"]
    texts = [r[1] for r in rows]
    assert texts[-2] == "day 49 | Reading: 98"
    assert texts[-1] == "Rows after sheet row 50 are not read: 150 more rows, over the 50-row limit per sheet."
