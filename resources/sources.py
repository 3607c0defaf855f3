"""Where documents come from: the collections file and ingestion limits, as a resource."""

from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import Field

from rag_assets.core.corpus.parsers.pdf_ocr import DEFAULT_OCR_LANGUAGES, OCR_LANGUAGES_PATTERN
from rag_assets.core.corpus.sources import (
    DEFAULT_MAX_DOCUMENT_MB,
    DEFAULT_MAX_DOCUMENT_PAGES,
    DEFAULT_MAX_DOCUMENT_WORDS,
    CollectionSpec,
)
from rag_assets.core.settings import collections_file, load_collections


class SourcesResource(dg.ConfigurableResource):
    """The collections to ingest (a YAML file) and the per-document size limit."""

    collections_file: str = Field(
        default="",
        description="The collections YAML (`collections: [{name, path, format, questions}]`); empty = "
        "$RAG_COLLECTIONS, else collections.yaml at the project root.",
    )
    max_document_mb: float = Field(
        default=DEFAULT_MAX_DOCUMENT_MB,
        gt=0,
        le=10_000,
        description="Documents larger than this are rejected (recorded in `rejected_documents`), not parsed.",
    )
    max_document_words: int = Field(
        default=DEFAULT_MAX_DOCUMENT_WORDS,
        ge=1,
        description="Words per document (markup included) above which it is rejected, not cut into passages.",
    )
    max_document_pages: int = Field(
        default=DEFAULT_MAX_DOCUMENT_PAGES,
        ge=1,
        le=1_000_000,
        description="PDFs of more pages are rejected (recorded in `rejected_documents`) before any page is read.",
    )
    duplicates: Literal["keep", "skip"] = Field(
        default="keep",
        description="Documents with the same content as an earlier one: `keep` (indexed, listed) or `skip` (rejected).",
    )
    ocr: Literal["auto", "off"] = Field(
        default="auto",
        description="PDF pages without a usable text layer (scans): `auto` reads them by OCR (Tesseract), "
        "`off` reports them unreadable (a PDF with no other text is rejected).",
    )
    ocr_languages: str = Field(
        default=DEFAULT_OCR_LANGUAGES,
        pattern=OCR_LANGUAGES_PATTERN,
        description="The languages OCR reads scanned pages in: Tesseract's codes joined by '+' (`fra+eng`); "
        "each needs its Debian package (tesseract-ocr-fra), else such pages are reported unread naming it.",
    )
    read_workers: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Processes that read PDF and Word files in parallel (four or more to read): 0 one per CPU "
        "core (at most 8), 1 none (read in the step's own process).",
    )

    def reading_options(self) -> dict[str, Any]:
        """The options `ingest` reads a collection with: the caps, duplicates, workers and OCR."""
        return {
            "max_document_mb": self.max_document_mb,
            "max_document_words": self.max_document_words,
            "max_document_pages": self.max_document_pages,
            "duplicates": self.duplicates,
            "read_workers": self.read_workers,
            "ocr": self.ocr,
            "ocr_languages": self.ocr_languages,
        }

    def resolved_file(self) -> Path:
        return Path(self.collections_file) if self.collections_file else collections_file()

    def collections(self) -> list[CollectionSpec]:
        return load_collections(self.resolved_file())

    def collection(self, name: str) -> CollectionSpec:
        for spec in self.collections():
            if spec.name == name:
                return spec
        raise KeyError(f"collection {name!r} is not in {self.resolved_file()}")
