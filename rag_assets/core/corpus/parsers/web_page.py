"""A web page saved from a browser -> its article, with trafilatura; then the HTML rules.

A page saved from a browser holds the site around the article: navigation menus, search forms,
cookie banners, "related" links, footers. trafilatura (Apache-2.0) finds the main content and
drops the rest, keeping the page's own headings, lists and tables; its HTML output then goes
through the HTML parser (html.py) like any page. A saved page is recognised by what browsers
write: the "saved from url" comment, an `.mhtml` archive, or a `NAME_files/` folder next to
`NAME.html` (whose scripts, styles and images are the page's, not documents: discovery.py skips
them). Other HTML files, and HTML inside JSONL page files, are read whole as before.
"""

from __future__ import annotations

import html
from pathlib import Path, PurePath

from rag_assets.core.corpus.blocks import Block
from rag_assets.core.corpus.decoding import DocumentRejected, decode_document
from rag_assets.core.corpus.parsers.errors import ParseError
from rag_assets.core.corpus.parsers.html import html_title, parse_html

FORMAT = "web_page"
MHTML_SUFFIXES = (".mhtml", ".mht")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_SAVED_MARK = b"saved from url="
_MARK_BYTES = 2048  # browsers write the mark right after the doctype


def assets_folder(page: Path) -> Path:
    """The folder a browser saves a page's scripts, styles and images in: `NAME_files/`."""
    return page.with_name(f"{page.stem}_files")


def is_page_asset(file: Path, root: Path) -> bool:
    """Whether `file` lies in a `NAME_files/` folder (under `root`) beside a saved `NAME.html`."""
    folder = file.parent
    while folder != root and folder != folder.parent:
        if folder.name.endswith("_files"):
            stem = folder.name[: -len("_files")]
            if any((folder.parent / f"{stem}{suffix}").is_file() for suffix in HTML_SUFFIXES):
                return True
        folder = folder.parent
    return False


def is_saved_page(name: str, data: bytes, has_assets_folder: bool = False) -> bool:
    """An `.mhtml` file, or HTML with the browser's "saved from url" mark or a `NAME_files/` folder."""
    suffix = PurePath(name).suffix.lower()
    if suffix in MHTML_SUFFIXES:
        return True
    return suffix in HTML_SUFFIXES and (_SAVED_MARK in data[:_MARK_BYTES].lower() or has_assets_folder)


def _mhtml_html(data: bytes) -> str:
    """The page of an MHTML archive: its first HTML part, decoded by its charset."""
    import email  # imported here with its policies (0.1 s): only .mhtml files need them
    import email.policy

    message = email.message_from_bytes(data, policy=email.policy.default)
    for part in message.walk():
        if part.get_content_type() == "text/html":
            try:
                return str(part.get_content())  # type: ignore[attr-defined]
            except (LookupError, UnicodeDecodeError):
                return decode_document(part.get_payload(decode=True) or b"")
    raise ParseError("an .mhtml file without an HTML page in it")


def extract_web_page(name: str, data: bytes) -> tuple[str, str]:
    """(the page's main content as HTML, headed by its <title>; its plain text) of a saved page.
    A page trafilatura finds no main content in is kept whole, rather than lost."""
    import trafilatura  # imported here: 1 s of imports only a folder with saved pages pays for

    try:
        page = _mhtml_html(data) if PurePath(name).suffix.lower() in MHTML_SUFFIXES else decode_document(data)
    except DocumentRejected as err:
        raise ParseError(str(err)) from None
    article = trafilatura.extract(
        page,
        output_format="html",
        include_tables=True,
        include_comments=False,
        include_images=False,
        include_links=False,
        deduplicate=False,
    )
    title = html_title(page)
    body = article or page
    head = f"<title>{html.escape(title)}</title>\n" if title and article else ""
    content = head + body
    blocks = parse_html(content)
    if not blocks:
        raise ParseError("no text in the saved page")
    return content, "\n".join(b.text for b in blocks)


def parse_web_page(content: str) -> list[Block]:
    """The blocks of a saved page's main content (read at ingestion)."""
    return parse_html(content)


def web_page_title(content: str) -> str | None:
    """The page's <title>, else its first level-1 heading."""
    return html_title(content)
