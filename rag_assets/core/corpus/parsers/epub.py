"""E-books (.epub) -> blocks: the package's spine in order, each chapter through the HTML rules.

An EPUB is a zip of XHTML chapters and a package document (`.opf`) that lists them: the spine is
their reading order, the navigation (EPUB 3's nav document, EPUB 2's `toc.ncx`) their titles.
zipfile opens the archive under the same limits as a Word file (archive_limits.py); lxml reads the
container, package and navigation with entities left unexpanded and no network; each chapter goes
through the HTML parser (html.py), so its headings, lists and tables read as any web page's. A
chapter without a heading of its own is headed by its navigation title. (The common EPUB library
for Python, EbookLib, is AGPL: not used.)
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from urllib.parse import unquote

from lxml import etree

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces
from rag_assets.core.corpus.decoding import DocumentRejected, decode_document
from rag_assets.core.corpus.parsers.archive_limits import ArchiveLimits, Deadline, plain_xml_error
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.html import parse_html
from rag_assets.core.corpus.parsers.layout_rows import (
    Row,
    check_zip,
    dump_layout,
    plain_text,
    row,
)

FORMAT = "epub"
_XHTML = ("application/xhtml+xml", "text/html")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False)
_NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "ncx": "http://www.daisy.org/z3986/2005/ncx/",
    "x": "http://www.w3.org/1999/xhtml",
    "epub": "http://www.idpf.org/2007/ops",
}


def _xml(archive: zipfile.ZipFile, name: str) -> etree._Element:
    try:
        return etree.fromstring(archive.read(name), _PARSER)
    except KeyError:
        raise ParseError(f"damaged .epub: its part {name} is missing") from None
    except etree.XMLSyntaxError as err:
        raise plain_xml_error(err, ".epub") from None


def _package(archive: zipfile.ZipFile) -> tuple[str, etree._Element]:
    container = _xml(archive, "META-INF/container.xml")
    rootfile = container.find(".//c:rootfile", _NS)
    path = rootfile.get("full-path") if rootfile is not None else None
    if not path:
        raise ParseError("damaged .epub: META-INF/container.xml names no package document")
    return path, _xml(archive, path)


def _nav_titles(
    archive: zipfile.ZipFile, package: etree._Element, base: str, items: dict[str, tuple[str, str]]
) -> dict[str, str]:
    """Chapter file -> its first navigation title (EPUB 3 nav document, else EPUB 2 NCX)."""
    titles: dict[str, str] = {}
    nav = package.find("opf:manifest/opf:item[@properties='nav']", _NS)
    if nav is None:
        for item in package.findall("opf:manifest/opf:item", _NS):
            if "nav" in (item.get("properties") or "").split():
                nav = item
    if nav is not None:
        path = _join(base, nav.get("href", ""))
        for link in _xml(archive, path).iterfind(".//x:nav//x:a", _NS):
            target = _join(posixpath.dirname(path), link.get("href", "").split("#")[0])
            titles.setdefault(target, collapse_spaces("".join(link.itertext())))
        return titles
    ncx_id = package.find("opf:spine", _NS).get("toc") if package.find("opf:spine", _NS) is not None else None
    ncx = items.get(ncx_id or "")
    if ncx is None:
        return titles
    path = ncx[0]
    for point in _xml(archive, path).iterfind(".//ncx:navPoint", _NS):
        label = point.find("ncx:navLabel/ncx:text", _NS)
        content = point.find("ncx:content", _NS)
        if label is not None and content is not None:
            target = _join(posixpath.dirname(path), content.get("src", "").split("#")[0])
            titles.setdefault(target, collapse_spaces(label.text or ""))
    return titles


def _join(base: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base, unquote(href)))


def _chapter_rows(archive: zipfile.ZipFile, path: str, nav_title: str | None) -> list[Row]:
    try:
        text = decode_document(archive.read(path))
    except KeyError:
        raise ParseError(f"damaged .epub: its chapter {path} is missing") from None
    except DocumentRejected:
        return []  # an empty chapter (a cover page)
    blocks: list[Block] = parse_html(text)
    rows = [[b.kind.value, b.text, b.level, 0, 0] for b in blocks]
    if rows and nav_title and not any(b.kind is BlockKind.HEADING for b in blocks):
        rows.insert(0, row("heading", nav_title, 1))
    return rows


def extract_epub(data: bytes, limits: ArchiveLimits = ArchiveLimits()) -> tuple[str, str]:
    """(layout JSON `parse_epub` reads, plain text) of an e-book; ParseError for a damaged or
    DRM-protected file, or one past `limits` (archive_limits.py)."""
    check_zip(data, FORMAT, limits)
    deadline = Deadline(limits.max_parse_seconds, ".epub")
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if "META-INF/encryption.xml" in archive.namelist():
            raise ParseError("the .epub is encrypted (DRM-protected); not read")
        path, package = _package(archive)
        base = posixpath.dirname(path)
        items = {
            item.get("id", ""): (_join(base, item.get("href", "")), item.get("media-type", ""))
            for item in package.findall("opf:manifest/opf:item", _NS)
        }
        titles = _nav_titles(archive, package, base, items)
        rows: list[Row] = []
        for ref in package.findall("opf:spine/opf:itemref", _NS):
            deadline.check()
            chapter, media = items.get(ref.get("idref", ""), ("", ""))
            if chapter and media in _XHTML:
                rows.extend(_chapter_rows(archive, chapter, titles.get(chapter)))
    title_element = package.find("opf:metadata/dc:title", _NS)
    title = collapse_spaces(title_element.text or "") if title_element is not None else ""
    return dump_layout(FORMAT, title or None, rows), plain_text(rows)
