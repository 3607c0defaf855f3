"""A paginated file's first pages read alone: a document card is read from its cover, and reading
a 300-page filing whole to find its cover would take a minute (core/corpus/document_cards.py)."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2 as pdfium

from rag_assets.core.corpus.document_cards import CARD_PAGES, DocumentCard, card_from_nodes
from rag_assets.core.corpus.parsers import extract_binary, parse_blocks
from rag_assets.core.corpus.parsers.pdf import pdf_title
from rag_assets.core.corpus.tree import build_tree


def pdf_first_pages(data: bytes, pages: int = CARD_PAGES) -> bytes:
    """A PDF of the first `pages` pages of the PDF `data`."""
    source = pdfium.PdfDocument(data)
    try:
        first = pdfium.PdfDocument.new()
        first.import_pages(source, list(range(min(pages, len(source)))))
        buffer = io.BytesIO()
        first.save(buffer)
        return buffer.getvalue()
    finally:
        source.close()


def pdf_card(path: Path, doc_id: str, pages: int = CARD_PAGES) -> DocumentCard:
    """The card of the PDF at `path`, read from its first `pages` pages with the project's PDF reader."""
    layout, _ = extract_binary("pdf", pdf_first_pages(path.read_bytes(), pages), name=path.name)
    title = pdf_title(layout, path.name) or ""
    tree = build_tree(title or "Untitled", parse_blocks("pdf", layout))
    return card_from_nodes(doc_id, title, tree.nodes)
