"""Collections and ingestion: files (or the built-in corpus) -> source documents, or rejections.

A collection is {name, path or glob, format}. Every document gets a stable id derived from its
collection and its place in the source (relative path, JSONL record id), and a content hash of
its bytes, so later stages can tell what changed. A document that cannot be read is *rejected*
with a reason naming it and the problem; nothing else in the collection is affected.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.core.corpus.decoding import DocumentRejected, decode_document
from rag_assets.core.corpus.discovery import collection_root, discover
from rag_assets.core.corpus.parsers import (
    BINARY_FORMATS,
    ParseError,
    binary_format,
    detect_format,
    extract_binary,
    guess_title,
)
from rag_assets.core.corpus.parsers.pdf import pdf_title
from rag_assets.core.corpus.parsers.pdf_extract import unread_pages
from rag_assets.core.corpus.parsers.pdf_ocr import DEFAULT_OCR_LANGUAGES
from rag_assets.core.corpus.parsers.web_page import assets_folder
from rag_assets.core.corpus.reader_version import reader_version
from rag_assets.core.corpus.reading_pool import in_order, worker_count

BUILTIN_PYTHON_REFERENCE = "builtin:python-reference"
AUTO = "auto"
PAGE_FORMATS = ("jsonl",)  # container formats: one document per record
DEFAULT_MAX_DOCUMENT_MB = 32.0
# A cap on words per document (markup included): one 5 MB single-line page made 8,323 passages
# and 9 minutes of embedding. The largest real documents here (e-manual JSON) hold ~120k.
DEFAULT_MAX_DOCUMENT_WORDS = 500_000
# Pages per PDF at most (counted before any page is read): a long annual report has a few hundred.
DEFAULT_MAX_DOCUMENT_PAGES = 2_000
DUPLICATE_POLICIES = (
    "keep",
    "skip",
)  # a document whose content another one already has
# JSONL page records: the first of these fields present gives the body and its format.
# A record "title" longer than this is not a title (one nq_wiki record carries its whole page
# there): the title would head every heading path and blow up every prompt that cites the page.
MAX_TITLE_CHARS = 300
_PAGE_BODY_FIELDS = (
    ("html", "html"),
    ("html_lines", "html"),
    ("markdown", "markdown"),
    ("text", "text"),
)


@dataclass(frozen=True, slots=True)
class CollectionSpec:
    name: str
    path: str  # a file, a folder (read recursively), a glob, or BUILTIN_PYTHON_REFERENCE
    format: str = AUTO
    questions: str | None = None  # a question JSONL file about this collection, if any


@dataclass(frozen=True, slots=True)
class SourceDocument:
    doc_id: str
    collection: str
    uri: str
    format: str
    title: str
    content_hash: str
    size_bytes: int
    text: str
    # the reading code and caps the text and title came from (`reader_version`); '' if unknown
    reader_version: str = ""


@dataclass(frozen=True, slots=True)
class Rejection:
    collection: str
    uri: str
    stage: str  # "ingest" or "parse"
    reason: str


@dataclass(slots=True)
class IngestResult:
    documents: list[SourceDocument]
    rejections: list[Rejection]
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (doc_id, doc_id of the same content)
    kept: int = 0  # documents kept as stored (same bytes, same reader), not read again

    def unread_pages(self) -> list[str]:
        """One line per PDF page that gave no text (`FILE page N: no text read: why`)."""
        return [
            f"{d.uri} page {page}: no text read: {why}"
            for d in self.documents
            if d.format == "pdf"
            for page, why in unread_pages(d.text)
        ]

    def nothing_readable(self, spec: CollectionSpec) -> str | None:
        """One line saying why a collection gave no document (its rejected files and reasons),
        or None when it gave at least one."""
        if self.documents:
            return None
        if not self.rejections:
            return f"collection {spec.name} has no document: no file under {spec.path}"
        return nothing_left(spec.name, "readable", self.rejections)


def nothing_left(collection: str, what: str, rejections: Sequence[Rejection], named: int = 5) -> str:
    """`collection X has no <what> document: N rejected (uri: reason; ...)`, the first `named`."""
    shown = "; ".join(f"{r.uri}: {r.reason}" for r in rejections[:named])
    more = len(rejections) - named
    rest = f"; and {more} more (the step's log lists them)" if more > 0 else ""
    return f"collection {collection} has no {what} document: {len(rejections)} rejected ({shown}{rest})"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record_title(value: object) -> str | None:
    """A page record's own title, if it is a plausible one (short, one line)."""
    title = " ".join(str(value or "").split())
    return title if title and len(title) <= MAX_TITLE_CHARS and "\n" not in str(value) else None


def _slug(collection: str, *parts: str) -> str:
    return "/".join([collection, *(p.replace("\\", "/").strip("/") for p in parts if p)])


def _too_many_words(text: str, limit: int) -> str | None:
    words = len(text.split())
    if words <= limit:
        return None
    return f"{words:,} words, over the {limit:,}-word limit per document (raise max_document_words to accept it)"


def _builtin_python_reference(collection: str) -> Iterator[SourceDocument]:
    """The Python Language Reference topics shipped with every CPython (pydoc_data.topics)."""
    from pydoc_data.topics import topics

    for key in sorted(topics):
        text = topics[key]
        data = text.encode("utf-8")
        yield SourceDocument(
            doc_id=_slug(collection, key),
            collection=collection,
            uri=f"pydoc_data.topics#{key}",
            format="text",
            title=guess_title("text", text) or key,
            content_hash=content_hash(data),
            size_bytes=len(data),
            text=text,
        )


def page_records(
    collection: str,
    file: Path,
    rel: str,
    text: str,
    max_words: int = DEFAULT_MAX_DOCUMENT_WORDS,
) -> Iterator[SourceDocument | Rejection]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        uri = f"{file}#line={line_no}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            yield Rejection(collection, uri, "ingest", f"invalid JSON on line {line_no}: {err.msg}")
            continue
        if not isinstance(record, dict):
            yield Rejection(collection, uri, "ingest", f"line {line_no} is not a JSON object")
            continue
        body = next(((record[f], fmt) for f, fmt in _PAGE_BODY_FIELDS if record.get(f)), None)
        if body is None:
            fields = ", ".join(f for f, _ in _PAGE_BODY_FIELDS)
            yield Rejection(
                collection,
                uri,
                "ingest",
                f"line {line_no} has none of the fields {fields}",
            )
            continue
        raw, fmt = body
        page = "\n".join(map(str, raw)) if isinstance(raw, list) else str(raw)
        too_long = _too_many_words(page, max_words)
        if too_long:
            yield Rejection(collection, uri, "ingest", f"line {line_no}: {too_long}")
            continue
        key = str(record.get("doc_id") or record.get("id") or f"line-{line_no}")
        data = page.encode("utf-8")
        yield SourceDocument(
            doc_id=_slug(collection, rel, key),
            collection=collection,
            uri=uri,
            format=fmt,
            title=_record_title(record.get("title")) or guess_title(fmt, page) or key,
            content_hash=content_hash(data),
            size_bytes=len(data),
            text=page,
        )


def iter_collection(
    spec: CollectionSpec,
    *,
    max_document_mb: float = DEFAULT_MAX_DOCUMENT_MB,
    max_document_words: int = DEFAULT_MAX_DOCUMENT_WORDS,
    max_document_pages: int = DEFAULT_MAX_DOCUMENT_PAGES,
    known: Mapping[str, SourceDocument] | None = None,
    read_workers: int = 1,
    ocr: str = "auto",
    ocr_languages: str = DEFAULT_OCR_LANGUAGES,
) -> Iterator[SourceDocument | Rejection]:
    """Yield every document of a collection, or a Rejection for each one that cannot be read.

    `known`: the documents the catalogue holds (doc id -> document). A file whose bytes and
    reader version (`reader_version`: this reading code under these caps) are a known
    document's is not read again: the stored document is yielded, as it was read.
    `read_workers`: processes that read the other files when `MIN_POOLED_FILES` or more of them
    are PDF or Word files (0: one per core; see `reading_pool`); the order stays the files'.
    `ocr`: `auto` reads scanned PDF pages by OCR, `off` reports them unreadable;
    `ocr_languages`: the Tesseract languages OCR reads ("eng", "fra+eng")."""
    if spec.path == BUILTIN_PYTHON_REFERENCE:
        yield from _builtin_python_reference(spec.name)
        return
    root = collection_root(spec.path)
    caps = _Caps(max_document_mb, max_document_words, max_document_pages, ocr, ocr_languages)
    files, skipped = discover(spec.path)
    for link, problem in skipped:
        yield Rejection(spec.name, str(link), "ingest", problem)
    slots: list[SourceDocument | None] = []  # the stored document, or None: to read
    tasks: list[tuple[CollectionSpec, Path, str, _Caps]] = []
    for file in files:
        try:
            rel = os.path.relpath(file, root)
        except ValueError:
            rel = file.name
        slots.append(_unchanged(spec, file, rel, caps, known or {}))
        if slots[-1] is None:
            tasks.append((spec, file, rel, caps))
    binary = sum(1 for _, file, _, _ in tasks if file.suffix.lower() in POOLED_SUFFIXES)
    workers = worker_count(read_workers) if binary >= MIN_POOLED_FILES else 1
    read = in_order(tasks, _read_task, workers)
    for kept in slots:
        if kept is not None:
            yield kept
        else:
            yield from next(read)


# fewer PDF, Office or e-book files than this are read here: a worker process costs a second to start
MIN_POOLED_FILES = 4
POOLED_SUFFIXES = (".pdf", ".docx", ".pptx", ".xlsx", ".xlsm", ".epub")


def _unchanged(
    spec: CollectionSpec, file: Path, rel: str, caps: _Caps, known: Mapping[str, SourceDocument]
) -> SourceDocument | None:
    """The stored document of a file whose bytes and reader version are unchanged, else None."""
    kept = known.get(_slug(spec.name, rel))
    if kept is None or kept.reader_version != caps.version or kept.size_bytes > caps.max_document_mb * 1024 * 1024:
        return None  # not stored, read by other code or caps, or now over the size cap: read (or refuse) it
    try:
        if file.stat().st_size != kept.size_bytes or content_hash(file.read_bytes()) != kept.content_hash:
            return None
    except OSError:
        return None  # reading it again says why
    return dataclasses.replace(kept, uri=str(file))


def _read_task(task: tuple[CollectionSpec, Path, str, _Caps]) -> list[SourceDocument | Rejection]:
    """One file's documents or rejection (a worker process runs this)."""
    return list(_file_documents(*task))


@dataclass(frozen=True, slots=True)
class _Caps:
    max_document_mb: float
    max_document_words: int
    max_document_pages: int
    ocr: str = "auto"
    ocr_languages: str = DEFAULT_OCR_LANGUAGES

    @property
    def version(self) -> str:
        """The reader version of documents read under these caps (the MB cap is checked before reading)."""
        return reader_version(
            max_document_words=self.max_document_words,
            max_document_pages=self.max_document_pages,
            ocr=self.ocr,
            ocr_languages=self.ocr_languages,
        )


def _file_documents(spec: CollectionSpec, file: Path, rel: str, caps: _Caps) -> Iterator[SourceDocument | Rejection]:
    """The document of one file read (the records of a page file), or why it cannot be read."""
    uri, doc_id, version = str(file), _slug(spec.name, rel), caps.version
    try:
        size = file.stat().st_size
        if size > caps.max_document_mb * 1024 * 1024:
            raise DocumentRejected(
                f"file is {size / 1024 / 1024:.1f} MB, over the {caps.max_document_mb:g} MB limit "
                "(raise max_document_mb to accept it)"
            )
        data = file.read_bytes()
        digest = content_hash(data)
        fmt, text = _read(spec.format, file, data, caps)
    except DocumentRejected as err:
        yield Rejection(spec.name, uri, "ingest", str(err))
        return
    except OSError as err:
        yield Rejection(spec.name, uri, "ingest", f"cannot read file: {err.strerror or err}")
        return
    if fmt == "jsonl":  # records are read again (cheaply); their trees are kept when unchanged
        for record in page_records(spec.name, file, rel, text, caps.max_document_words):
            yield dataclasses.replace(record, reader_version=version) if isinstance(record, SourceDocument) else record
        return
    yield SourceDocument(doc_id, spec.name, uri, fmt, _title(fmt, text, file), digest, len(data), text, version)


def _read(declared: str, file: Path, data: bytes, caps: _Caps) -> tuple[str, str]:
    """(format, text) of a file's bytes: PDF and Word read into their layout text, the rest
    decoded; DocumentRejected when it cannot be read or has too many words."""
    binary = (
        binary_format(file.name, data, has_assets_folder=assets_folder(file).is_dir()) if declared == AUTO else None
    )
    if binary or declared in BINARY_FORMATS:
        fmt = binary or declared
        text, plain = _extract(fmt, data, caps, file.name)
    else:
        text = plain = decode_document(data)
        fmt = declared if declared != AUTO else _detect(file, text)
    too_long = None if fmt == "jsonl" else _too_many_words(plain, caps.max_document_words)
    if too_long:  # page files are capped record by record
        raise DocumentRejected(too_long)
    return fmt, text


def _extract(fmt: str, data: bytes, caps: _Caps, name: str = "") -> tuple[str, str]:
    """A binary file's (PDF, Office, e-book, saved page) layout text and plain text; a file that
    gives none is rejected."""
    if not data.strip():
        raise DocumentRejected("empty document (no text)")
    try:
        return extract_binary(
            fmt, data, max_pages=caps.max_document_pages, name=name, ocr=caps.ocr, ocr_languages=caps.ocr_languages
        )
    except ParseError as err:
        raise DocumentRejected(str(err)) from None
    except Exception as err:  # a hostile file must not end the run: any library failure rejects it
        raise DocumentRejected(f"cannot read as {fmt}: {err.__class__.__name__}: {err}") from None


def _detect(file: Path, text: str) -> str:
    if file.suffix.lower() in (".jsonl", ".ndjson"):
        return "jsonl"
    return detect_format(file.name, text)


def _title(fmt: str, text: str, file: Path) -> str:
    try:
        if fmt == "pdf":  # a printed title is followed by the file's name (see `pdf_title`)
            return pdf_title(text, file.stem) or file.stem
        return guess_title(fmt, text) or file.stem
    except ValueError:  # unparseable: the tree stage reports it; the title falls back
        return file.stem


def ingest(
    spec: CollectionSpec,
    *,
    max_document_mb: float = DEFAULT_MAX_DOCUMENT_MB,
    max_document_words: int = DEFAULT_MAX_DOCUMENT_WORDS,
    duplicates: str = "keep",
    max_document_pages: int = DEFAULT_MAX_DOCUMENT_PAGES,
    known: Mapping[str, SourceDocument] | None = None,
    read_workers: int = 1,
    ocr: str = "auto",
    ocr_languages: str = DEFAULT_OCR_LANGUAGES,
) -> IngestResult:
    """Every readable document of the collection, the rejected ones with their reasons, and the
    documents whose content an earlier one already has (`duplicates`: keep them, listed, or
    skip them as rejections). `known`: the catalogue's documents, kept where unchanged (see
    `iter_collection`), the others read on `read_workers` processes; `ocr`: auto reads scanned PDF
    pages by OCR, off reports them unreadable; `ocr_languages`: the Tesseract languages it reads."""
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates must be one of {DUPLICATE_POLICIES}, not {duplicates!r}")
    documents: list[SourceDocument] = []
    rejections: list[Rejection] = []
    copies: list[tuple[str, str]] = []
    seen: set[str] = set()
    first_with: dict[str, str] = {}
    limits = {"max_document_mb": max_document_mb, "max_document_words": max_document_words}
    for item in iter_collection(
        spec,
        **limits,
        max_document_pages=max_document_pages,
        known=known,
        read_workers=read_workers,
        ocr=ocr,
        ocr_languages=ocr_languages,
    ):
        if isinstance(item, Rejection):
            rejections.append(item)
            continue
        if item.doc_id in seen:
            rejections.append(
                Rejection(
                    spec.name,
                    item.uri,
                    "ingest",
                    f"duplicate document id {item.doc_id!r}",
                )
            )
            continue
        original = first_with.setdefault(item.content_hash, item.doc_id)
        if original != item.doc_id:
            copies.append((item.doc_id, original))
            if duplicates == "skip":
                reason = f"same content as {original} (duplicates: skip; set keep to index it)"
                rejections.append(Rejection(spec.name, item.uri, "ingest", reason))
                continue
        seen.add(item.doc_id)
        documents.append(item)
    # a kept document is the stored one with its uri renewed: it carries the stored text object
    kept = sum(1 for d in documents if known is not None and d.doc_id in known and known[d.doc_id].text is d.text)
    return IngestResult(documents, rejections, copies, kept)
