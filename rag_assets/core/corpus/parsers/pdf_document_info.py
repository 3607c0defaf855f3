"""What a PDF states about itself beside its pages: its bookmarks (the outline) and the Title
of its metadata, read with PDFium at extraction (`pdf_extract`)."""

from __future__ import annotations

import re

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_FILE_NAME = re.compile(r"\.(?:docx?|pdf|tex|dvi|indd|pptx?|xlsx?|odt|rtf|txt)$|^Microsoft \w+ - ", re.IGNORECASE)


def outline_entries(document: pdfium.PdfDocument) -> list[list[object]]:
    """Bookmarks as `[level, title, page index or -1, top or -1]`, level 1 = top."""
    entries: list[list[object]] = []
    try:
        bookmarks = list(document.get_toc(max_depth=16))
    except pdfium.PdfiumError:
        return []
    for bookmark in bookmarks:
        title = " ".join(bookmark.get_title().split())
        if not title:
            continue
        page_index, top = -1, -1.0
        dest = bookmark.get_dest()
        if dest is not None:
            page_index = dest.get_index()
            mode, view = dest.get_view()
            known = page_index is not None and 0 <= page_index < len(document) and len(view) >= 2
            if known and mode == pdfium_c.PDFDEST_VIEW_XYZ and view[1]:
                top = round(document[page_index].get_height() - view[1], 1)
            if page_index is None:
                page_index = -1
        entries.append([bookmark.level + 1, title, page_index, top])
    return entries


def metadata_title(document: pdfium.PdfDocument) -> str | None:
    """The Title the PDF's metadata states, unless it is a file name ("report_v2", "Microsoft
    Word - notes.docx"), as producers often write there."""
    try:
        title = " ".join(document.get_metadata_value("Title").split())
    except pdfium.PdfiumError:
        return None
    if not title or " " not in title or _FILE_NAME.search(title):
        return None
    return title
