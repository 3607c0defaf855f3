"""A text document's bytes -> its text, in the encoding they are in; only binary is rejected."""

from __future__ import annotations

import codecs

import charset_normalizer

_BINARY_SNIFF_BYTES = 8192


class DocumentRejected(ValueError):
    """Raised for one unreadable document; the message is the reason shown to the user."""


def decode_document(data: bytes) -> str:
    """The text of a document's bytes, in the encoding they are in: the one their BOM names
    (UTF-8/16/32), else UTF-8, else the one charset-normalizer finds (UTF-16/32 without a BOM,
    legacy code pages); only bytes no text encoding explains are rejected, as binary."""
    if not data.strip():
        raise DocumentRejected("empty document (no text)")
    text = _bom_decoded(data) or _utf8_decoded(data) or _detected(data)
    if text is None or "\x00" in text[:_BINARY_SNIFF_BYTES]:
        why = (
            "NUL bytes in the first 8 KB"
            if b"\x00" in data[:_BINARY_SNIFF_BYTES]
            else "no text encoding fits its bytes"
        )
        raise DocumentRejected(f"binary file ({why}), not a text document")
    if not text.strip():
        raise DocumentRejected("empty document (no text)")
    return text


# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _bom_decoded(data: bytes) -> str | None:
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                return None
    return None


def _utf8_decoded(data: bytes) -> str | None:
    """UTF-8 text without NUL bytes (ASCII in UTF-16 is valid UTF-8 full of NULs)."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _mostly_ascii(text: str) -> bool:
    return sum(ch < "\x80" for ch in text) * 4 >= len(text)


def _detected(data: bytes) -> str | None:
    """charset-normalizer's reading of the bytes, None when no encoding fits. Short texts fit many
    code pages equally well: among the equally good, Windows-1252 (Western text) is preferred."""
    matches = charset_normalizer.from_bytes(data)
    best = matches.best()
    if best is None:
        return None
    if b"\x00" in data[:_BINARY_SNIFF_BYTES] and not _mostly_ascii(str(best)[:_BINARY_SNIFF_BYTES]):
        return None  # binary bytes read as CJK UTF-16: a text file's markup, spaces and newlines are ASCII
    tied = [m for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)]
    if any("cp1252" in m.could_be_from_charset for m in tied):
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    return str(best)
