"""The owner's corrections to document cards: a `cards.yaml` beside the collection's documents.

    # cards.yaml: doc id (or the file's path inside the collection folder) -> the fields to set
    ACME_2022.pdf:
      organisation: ACME Corporation
      fiscal_year: 2022
      kind: 10-K

Its entries override the fields read from the documents (core/corpus/document_cards.py); a card
records which of its fields came from here. The file is the owner's, not a document: ingestion
does not read it as one (core/corpus/discovery.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rag_assets.core.corpus.document_cards import CARD_FIELDS, DocumentCard
from rag_assets.core.errors import ConfigError

CARDS_FILE = "cards.yaml"
_NUMBERS = ("fiscal_year", "quarter")


@dataclass(frozen=True, slots=True)
class CardSidecar:
    """doc id or file path -> the fields its owner set; `path` is where they were read from."""

    path: str = ""
    entries: Mapping[str, Mapping[str, object]] = field(default_factory=dict)

    def apply(self, cards: Sequence[DocumentCard], collection: str) -> tuple[list[DocumentCard], list[str]]:
        """The cards with their owner's fields set, and the entries that name no document."""
        by_key = dict(self.entries)
        used: set[str] = set()
        out = []
        for card in cards:
            relative = card.doc_id.removeprefix(f"{collection}/")
            key = card.doc_id if card.doc_id in by_key else relative if relative in by_key else None
            if key is None:
                out.append(card)
                continue
            used.add(key)
            out.append(card.with_fields(dict(by_key[key])))
        return out, sorted(set(by_key) - used)


def read_sidecar(path: Path) -> CardSidecar:
    """The cards file at `path` (an empty sidecar where there is none); ConfigError naming the file,
    the entry and the problem for a file that cannot be used."""
    if not path.is_file():
        return CardSidecar()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"cards file {path} cannot be read: {str(err).splitlines()[0]}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"cards file {path}: expected a mapping of doc id -> {{field: value}}")
    entries: dict[str, dict[str, object]] = {}
    for doc, values in raw.items():
        if not isinstance(values, dict):
            raise ConfigError(f"cards file {path}, entry {doc!r}: expected a mapping of field -> value")
        unknown = sorted(str(k) for k in values if k not in CARD_FIELDS)
        if unknown:
            raise ConfigError(
                f"cards file {path}, entry {doc!r}: unknown field(s) {', '.join(unknown)}; "
                f"expected {', '.join(CARD_FIELDS)}"
            )
        entries[str(doc)] = {k: _value(path, str(doc), k, v) for k, v in values.items()}
    return CardSidecar(str(path), entries)


def _value(path: Path, doc: str, name: str, value: object) -> object:
    if name not in _NUMBERS:
        return "" if value is None else str(value)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"cards file {path}, entry {doc!r}: {name} must be a whole number, got {value!r}")
    if name == "quarter" and not 1 <= value <= 4:
        raise ConfigError(f"cards file {path}, entry {doc!r}: quarter must be 1-4, got {value}")
    return value
