"""Format parsers: each is a pure function text -> list[Block]; `build_tree` does the nesting.

One module per format keeps each parser small and testable on its own; this module only
dispatches, guesses titles and detects formats, so adding a format is one module and one entry.
Binary formats (PDF, Word) are first read into a JSON layout document at ingestion
(`extract_binary`), which is the text their parser then reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import partial
from pathlib import PurePath

from rag_assets.core.corpus.blocks import Block
from rag_assets.core.corpus.parsers.csv_table import csv_title, parse_csv
from rag_assets.core.corpus.parsers.docx import ZIP_MAGIC, docx_title, extract_docx, parse_docx
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.html import html_title, parse_html
from rag_assets.core.corpus.parsers.layout_rows import layout_blocks, layout_title
from rag_assets.core.corpus.parsers.manual_json import manual_title, parse_manual_json
from rag_assets.core.corpus.parsers.markdown import markdown_title, parse_markdown
from rag_assets.core.corpus.parsers.pdf import parse_pdf, pdf_title
from rag_assets.core.corpus.parsers.pdf_extract import PDF_MAGIC, extract_pdf
from rag_assets.core.corpus.parsers.pdf_ocr import DEFAULT_OCR_LANGUAGES
from rag_assets.core.corpus.parsers.text import parse_text, text_title
from rag_assets.core.corpus.parsers.web_page import extract_web_page, is_saved_page, parse_web_page, web_page_title

__all__ = [
    "BINARY_FORMATS",
    "FORMATS",
    "ParseError",
    "binary_format",
    "detect_format",
    "extract_binary",
    "guess_title",
    "parse_blocks",
]

FORMATS = ("markdown", "html", "text", "manual_json", "pdf", "docx", "pptx", "xlsx", "epub", "csv", "web_page")
# read from bytes at ingestion, see `extract_binary`
BINARY_FORMATS = ("pdf", "docx", "pptx", "xlsx", "epub", "web_page")

_PARSERS: dict[str, Callable[[str], list[Block]]] = {
    "markdown": parse_markdown,
    "html": parse_html,
    "text": parse_text,
    "manual_json": parse_manual_json,
    "pdf": parse_pdf,
    "docx": parse_docx,
    "pptx": partial(layout_blocks, "pptx"),
    "xlsx": partial(layout_blocks, "xlsx"),
    "epub": partial(layout_blocks, "epub"),
    "csv": parse_csv,
    "web_page": parse_web_page,
}
_TITLES: dict[str, Callable[[str], str | None]] = {
    "markdown": markdown_title,
    "html": html_title,
    "text": text_title,
    "manual_json": manual_title,
    "pdf": pdf_title,
    "docx": docx_title,
    "pptx": partial(layout_title, "pptx"),
    "xlsx": partial(layout_title, "xlsx"),
    "epub": partial(layout_title, "epub"),
    "csv": csv_title,
    "web_page": web_page_title,
}
_EXTENSIONS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".txt": "text",
    ".rst": "text",
    ".text": "text",
    ".json": "manual_json",
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".epub": "epub",
    ".csv": "csv",
    ".tsv": "csv",
    ".mhtml": "web_page",
    ".mht": "web_page",
}
_SNIFF_CHARS = 65_536
_HTML_TAGS = re.compile(
    r"<(?:html|head|body|div|p|h[1-6]|table|tr|td|th|ul|ol|li|dl|pre|section|article|br)\b[^>]*>",
    re.IGNORECASE,
)
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_SETEXT = re.compile(r"^ {0,3}\S[^\n]*\n {0,3}(?:=+|-+)[ \t]*$", re.MULTILINE)
_MARKDOWN_HINTS = re.compile(r"^ {0,3}(?:```|~~~)|\[[^\]\n]+\]\([^)\n]+\)|^\|.*\|[ \t]*$", re.MULTILINE)
_TEXT_UNDERLINE = re.compile(r'^\S[^\n]*\n([*~^"+#])\1{2,}[ \t]*$', re.MULTILINE)


def _parser(fmt: str) -> str:
    if fmt not in _PARSERS:
        raise ParseError(f"unknown document format {fmt!r} (known: {', '.join(FORMATS)})")
    return fmt


def parse_blocks(fmt: str, text: str) -> list[Block]:
    """The blocks of `text` read as `fmt`; ParseError when it is not such a document."""
    return _PARSERS[_parser(fmt)](text)


def guess_title(fmt: str, text: str) -> str | None:
    """A title found in the document itself, or None (callers fall back to the file name).

    markdown: the first level-1 heading, else the first heading; html: <title>, else the first
    h1; text: the first underlined heading; manual_json: the first section's title when it is the
    manual's only top-level section (see `manual_title`).
    """
    return _TITLES[_parser(fmt)](text)


def binary_format(name: str, data: bytes, *, has_assets_folder: bool = False) -> str | None:
    """The format of a file read from bytes (pdf, docx, pptx, xlsx, epub, or web_page: a page
    saved from a browser, see `is_saved_page`) by extension, else a PDF by its header, or None."""
    fmt = _EXTENSIONS.get(PurePath(name).suffix.lower())
    if fmt in BINARY_FORMATS:
        return fmt
    if is_saved_page(name, data, has_assets_folder):
        return "web_page"
    if data[:1024].lstrip().startswith(PDF_MAGIC):
        return "pdf"
    return None


def extract_binary(
    fmt: str,
    data: bytes,
    *,
    max_pages: int | None = None,
    name: str = "",
    ocr: str = "auto",
    ocr_languages: str = DEFAULT_OCR_LANGUAGES,
) -> tuple[str, str]:
    """(layout text the format's parser reads, plain text for word counts) of a file read from
    bytes; ParseError naming the problem for a damaged, encrypted, truncated or text-less file, or
    a PDF (a presentation) of more than `max_pages` pages (slides). `name`: the file's name;
    `ocr`: `auto` reads a PDF's scanned pages by OCR (in `ocr_languages`), `off` reports them unreadable."""
    if fmt == "pdf":
        pdf = extract_pdf(data, max_pages, ocr=ocr, name=name, ocr_languages=ocr_languages)
        return pdf.layout, pdf.plain_text
    if fmt == "docx":
        if not data.startswith(ZIP_MAGIC):
            raise ParseError("not a .docx file (not a zip archive; an old binary .doc? save it as .docx)")
        docx = extract_docx(data)
        return docx.layout, docx.plain_text
    # imported here: python-pptx and openpyxl take 0.4 s to import, paid only by a folder holding such files
    if fmt == "pptx":
        from rag_assets.core.corpus.parsers.pptx import extract_pptx

        return extract_pptx(data, max_slides=max_pages)
    if fmt == "xlsx":
        from rag_assets.core.corpus.parsers.xlsx import extract_xlsx

        return extract_xlsx(data)
    if fmt == "epub":
        from rag_assets.core.corpus.parsers.epub import extract_epub

        return extract_epub(data)
    if fmt == "web_page":
        return extract_web_page(name or "page.html", data)
    raise ParseError(f"{fmt!r} is not a binary format (binary formats: {', '.join(BINARY_FORMATS)})")


def _looks_like_manual(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and bool(data)
        and all(isinstance(v, dict) and isinstance(v.get("html"), list) for v in data.values())
    )


def detect_format(name: str, text: str) -> str:
    """The format of a document from its file name, else from its content.

    Any `.json` is taken as manual_json, the only JSON format there is, so a malformed one is
    rejected with the reason it is not a manual instead of being read as plain text. Without a
    known extension: a JSON dict of sections is manual_json; markup starting with `<` or HTML
    block tags is html; `#` headings, setext headings, fences or links are markdown; else text.
    """
    suffix = PurePath(name).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    head = text[:_SNIFF_CHARS]
    stripped = head.lstrip()
    if stripped.startswith("{") and _looks_like_manual(text):
        return "manual_json"
    if stripped.startswith("<"):
        return "html"
    if _ATX.search(head):
        return "markdown"
    if _HTML_TAGS.search(head):
        return "html"
    if _TEXT_UNDERLINE.search(head):
        return "text"
    if _SETEXT.search(head) or _MARKDOWN_HINTS.search(head):
        return "markdown"
    return "text"
