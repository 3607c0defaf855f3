"""Validating parsers for every LLM stage of ConTReGen and Disco-RAG.

Like the router's `parse_router_output`: never raise, never return what they cannot check. A line
that looks like an item of the grammar but fails validation is counted `invalid`; an output with
nothing usable is a `fallback`, and the caller falls back visibly (the undecomposed query, the
plain chunk, the retrieval-order plan) and records it with the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_assets.core.answering.generation.prompts import (
    BLUEPRINT_MAX_STEPS,
    DECOMPOSE_EXAMPLE,
    DISCOURSE_RELATIONS,
    NOTHING_RELEVANT,
    RHETORICAL_RELATIONS,
    SUBQUERY_MAX_CHARS,
)

_ITEM = re.compile(r"^\s*(?:\d{1,3}\s*[.):]|[-*•])\s*(.*?)\s*$")
_RELATION = re.compile(r"^\s*(\d{1,4})\s*(?:->|→|=>|-|:)\s*(\d{1,4})\s*[:,]?\s*([A-Za-z]+)\s*\.?\s*$")
_STEP = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])?\s*\[\s*(\d{1,4})\s*\]\s*[:\-]?\s*(.*?)\s*$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_IRRELEVANT = re.compile(r"^\W*(nothing relevant|i do not know|i don't know|unknown|none)\W*$", re.IGNORECASE)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _lines(text: object) -> list[str]:
    return [line for line in str(text or "").splitlines() if line.strip()]


@dataclass(frozen=True, slots=True)
class SubqueryParse:
    subqueries: tuple[str, ...]
    invalid: int  # lines that were not a usable sub-question (or one too many)

    @property
    def fallback(self) -> bool:
        return not self.subqueries


def parse_subqueries(text: object, parent: str, branching: int) -> SubqueryParse:
    """At most `branching` distinct sub-questions: an item line (or a bare line) that ends with
    '?', has 3 to 40 words, no control characters, and is neither the parent question again nor a
    copy of the prompt's example."""
    kept: list[str] = []
    invalid = 0
    seen = {_norm(parent), *(_norm(q) for q in DECOMPOSE_EXAMPLE)}  # the prompt's example, copied
    for line in _lines(text):
        match = _ITEM.match(line)
        query = (match.group(1) if match else line).strip()
        words = len(query.split())
        key = _norm(query)
        valid = (
            query.endswith("?")
            and 3 <= words <= 40
            and len(query) <= SUBQUERY_MAX_CHARS + 20
            and not _CONTROL.search(query)
            and key
            and key not in seen
        )
        if not valid or len(kept) >= branching:
            invalid += 1
            continue
        seen.add(key)
        kept.append(query)
    return SubqueryParse(tuple(kept), invalid)


def is_irrelevant(finding: str) -> bool:
    """A summary or synthesis that says the evidence holds nothing for its (sub-)question."""
    text = str(finding or "").strip()
    return not text or bool(_IRRELEVANT.match(text)) or text.casefold().startswith(NOTHING_RELEVANT.casefold()[:-1])


@dataclass(frozen=True, slots=True)
class FindingParse:
    text: str  # the finding, or '' when the output was unusable
    irrelevant: bool  # the model said the evidence holds nothing relevant
    invalid: bool  # empty or unusable output (the caller falls back)


def parse_finding(text: object, max_chars: int = 1200) -> FindingParse:
    """A leaf summary or a parent synthesis: free text, but not empty, not control garbage, not
    an echo of the prompt's scaffolding; cut to `max_chars`."""
    raw = _CONTROL.sub(" ", str(text or "")).strip()
    if not raw:
        return FindingParse("", False, True)
    if is_irrelevant(raw):
        return FindingParse("", True, False)
    letters = sum(c.isalpha() for c in raw)
    if letters < 3 or letters < 0.3 * len(raw) or raw.lower().startswith(("passages:", "findings:", "<evidence>")):
        return FindingParse("", False, True)
    return FindingParse(" ".join(raw.split())[:max_chars], False, False)


@dataclass(frozen=True, slots=True)
class DiscourseParse:
    # unit number (2..n) -> (the earlier unit it attaches to, relation)
    relations: dict[int, tuple[int, str]]
    invalid: int  # relation lines that failed validation
    missing: int  # units 2..n left without a valid relation

    @property
    def fallback(self) -> bool:
        return not self.relations


def parse_discourse(text: object, units: int) -> DiscourseParse:
    """Lines `k -> j relation`: 2 <= k <= units, 1 <= j < k (a tree: each unit attaches once, to
    an earlier one), relation in DISCOURSE_RELATIONS."""
    relations: dict[int, tuple[int, str]] = {}
    invalid = 0
    for line in _lines(text):
        match = _RELATION.match(line)
        if not match:
            invalid += 1
            continue
        unit, parent, label = int(match.group(1)), int(match.group(2)), match.group(3).lower()
        if not (2 <= unit <= units and 1 <= parent < unit and label in DISCOURSE_RELATIONS and unit not in relations):
            invalid += 1
            continue
        relations[unit] = (parent, label)
    return DiscourseParse(relations, invalid, max(units - 1, 0) - len(relations))


def parse_rhetorical(text: object) -> str | None:
    """The relation of one passage pair, when the output is exactly one known label."""
    words = _norm(str(text or "")).split()
    return words[0] if len(words) == 1 and words[0] in RHETORICAL_RELATIONS else None


@dataclass(frozen=True, slots=True)
class BlueprintParse:
    steps: tuple[tuple[int, str], ...]  # (passage number, what to take from it)
    invalid: int

    @property
    def fallback(self) -> bool:
        return not self.steps


def parse_blueprint(text: object, chunks: int, max_steps: int = BLUEPRINT_MAX_STEPS) -> BlueprintParse:
    """Lines `- [n] text`: n a passage number 1..chunks, 1 to 30 words of text, at most
    `max_steps` steps; anything else is invalid."""
    steps: list[tuple[int, str]] = []
    invalid = 0
    for line in _lines(text):
        match = _STEP.match(line)
        if not match:
            invalid += 1
            continue
        number, step = int(match.group(1)), match.group(2).strip()
        if not (1 <= number <= chunks and 1 <= len(step.split()) <= 30) or _CONTROL.search(step) or "[" in step:
            invalid += 1
            continue
        if len(steps) >= max_steps:
            invalid += 1
            continue
        steps.append((number, step))
    return BlueprintParse(tuple(steps), invalid)
