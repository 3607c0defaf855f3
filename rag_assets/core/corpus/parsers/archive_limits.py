"""Zip-based documents (.docx, .pptx, .xlsx, .epub) and the XML inside them, read so that no file can exhaust the machine.

Before anything is decompressed, the archive's directory is checked: the number of entries, the
total size they expand to and each entry's compression ratio (a zip bomb is a few MB that expands
to GBs). Python's zipfile never returns more bytes than an entry declares, so the declared sizes
bound what reading can cost; a lying entry fails its CRC check and is rejected as damaged.

The XML is parsed by lxml with entities left unexpanded (`resolve_entities=False`), no network
access and libxml2's default limits (`huge_tree=False`: at most 256 levels of nesting, text nodes
of at most 10 MB): python-docx's own parser is configured so. A part that declares a DTD (the
way to define entities; Word never writes one) is refused before it is parsed. Each rejection
says what was wrong in plain words.
"""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import dataclass

from rag_assets.core.corpus.parsers.errors import ParseError

MIB = 1024 * 1024
_DTD_MARKS = (b"<!DOCTYPE", b"<!ENTITY")
_XML_PARTS = (".xml", ".rels")
_XML_HEAD = 4096  # a DTD can only come before the root element


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """What one zip-based document may hold."""

    max_expanded_bytes: int = 64 * MIB  # all entries, decompressed (python-docx holds them all)
    # the XML parts, decompressed: lxml's tree takes about 11 bytes per byte of XML, so 20 MB of
    # XML (a Word file of 100,000 short paragraphs is 15 MB) is read in about 250 MB
    max_xml_bytes: int = 20 * MIB
    max_entries: int = 10_000
    max_ratio: float = 400.0  # an entry's decompressed size / its compressed size (XML: ~5-50)
    max_parse_seconds: float = 60.0  # reading the whole document


def check_archive(data: bytes, limits: ArchiveLimits, what: str = ".docx") -> None:
    """ParseError (in plain words) when the archive's directory shows it would expand past the
    limits; nothing is decompressed. Every XML part's head is checked for a DTD too."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
            _check_directory(entries, limits, what)
            for entry in entries:
                if entry.filename.endswith(_XML_PARTS):
                    _check_no_dtd(archive, entry, what)
    except zipfile.BadZipFile as err:
        raise ParseError(f"damaged or incomplete {what} (not a readable zip archive: {err})") from None


def _check_directory(entries: list[zipfile.ZipInfo], limits: ArchiveLimits, what: str) -> None:
    if len(entries) > limits.max_entries:
        raise ParseError(
            f"the {what} file holds {len(entries)} parts, more than the {limits.max_entries} allowed; not read"
        )
    expanded = sum(e.file_size for e in entries)
    if expanded > limits.max_expanded_bytes:
        raise ParseError(
            f"the {what} file would expand to {expanded / MIB:.0f} MB, over the {limits.max_expanded_bytes / MIB:.0f} MB "
            "limit (a zip bomb, or a document too large to read); not read"
        )
    xml = sum(e.file_size for e in entries if e.filename.endswith(_XML_PARTS))
    if xml > limits.max_xml_bytes:
        raise ParseError(
            f"the {what} file's XML would expand to {xml / MIB:.0f} MB, over the {limits.max_xml_bytes / MIB:.0f} MB "
            "limit (reading it would take about ten times that in memory); not read"
        )
    for entry in entries:
        ratio = entry.file_size / max(entry.compress_size, 1)
        if entry.file_size > MIB and ratio > limits.max_ratio:
            raise ParseError(
                f"the {what} file's part {entry.filename} is compressed {ratio:.0f} to 1, more than the "
                f"{limits.max_ratio:g} to 1 real documents reach (a zip bomb); not read"
            )


def _check_no_dtd(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, what: str) -> None:
    with archive.open(entry) as part:
        head = part.read(_XML_HEAD)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16: look at it as text
        head = head.decode("utf-16", errors="replace").encode("utf-8", errors="replace")
    if any(mark in head for mark in _DTD_MARKS):
        raise ParseError(
            f"the {what} file's part {entry.filename} declares a DTD (entity definitions, which Office files and e-books never need "
            "and which can expand without bound); not read"
        )


def plain_xml_error(err: Exception, what: str = ".docx") -> ParseError:
    """lxml's message for a part it refused, in plain words."""
    message = str(err)
    if "Excessive depth" in message:
        return ParseError(
            f"the {what} file nests its content more than 256 levels deep (tables inside tables inside tables...); not read"
        )
    if "huge" in message.lower() or "too long" in message.lower():
        return ParseError(f"the {what} file holds a piece of text too large to read safely (over 10 MB); not read")
    if "entity" in message.lower():
        return ParseError(f"the {what} file uses XML entities, which Office files never hold; not read")
    return ParseError(f"damaged {what} file: its XML cannot be read ({message.split(',')[0]})")


class Deadline:
    """The time a document may take to read; `check()` raises a ParseError once it has passed."""

    def __init__(self, seconds: float, what: str = ".docx") -> None:
        self.seconds = seconds
        self.what = what
        self._end = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self._end:
            raise ParseError(
                f"reading the {self.what} file took over {self.seconds:g} s, the limit per document; not read"
            )
