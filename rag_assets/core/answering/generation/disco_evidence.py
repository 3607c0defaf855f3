"""Disco-RAG's evidence as it moves through the stages (`disco.py`): each question's chunks with
their discourse units (each at its exact document span), the rhetorical graph's edges and the
blueprint; how the blueprint writer and the reader see it; and its part of the answer's
`structure` JSON."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.answering.citations import passage_citations
from rag_assets.core.answering.generation.contregen import citation_dict
from rag_assets.core.answering.reader_prompts import number_blocks
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.retrieval import SearchHit

MAX_UNITS = 6  # units per chunk the LLM labels (later ones stay in the chunk, unlabelled)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_EDGE_WORDS = {
    "support": "supports",
    "contradiction": "contradicts",
    "background": "gives background for",
    "elaboration": "elaborates on",
}


@dataclass(slots=True)
class Unit:
    doc_id: str
    node_id: int
    start: int  # document character span
    end: int
    text: str
    parent: int | None = None  # the unit (1-based) it attaches to
    relation: str | None = None


@dataclass(slots=True)
class Chunk:
    hit: SearchHit
    units: list[Unit]
    status: str = "plain"  # parsed | fallback | single-unit | plain (no discourse stage)
    raw: str = ""
    invalid: int = 0
    missing: int = 0

    @property
    def parsed_units(self) -> int:
        return min(len(self.units), MAX_UNITS)


def _zero_counts() -> dict[str, int]:
    return {
        "discourse_invalid_lines": 0,
        "discourse_fallbacks": 0,
        "discourse_missing_relations": 0,
        "graph_invalid": 0,
        "blueprint_invalid_lines": 0,
        "blueprint_fallbacks": 0,
    }


@dataclass(slots=True)
class QuestionState:
    """One question's evidence as the stages build it up (the answer's `structure`)."""

    chunks: list[Chunk] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    blueprint: list[tuple[int, str]] = field(default_factory=list)
    blueprint_status: str = ""
    blueprint_raw: str = ""
    counts: dict[str, int] = field(default_factory=_zero_counts)


def segment(hit: SearchHit, trees: Mapping[str, Sequence[TreeNode]]) -> list[Unit]:
    """The passage's sentences, each inside one DST node with its exact document span."""
    nodes = trees.get(hit.doc_id)
    units: list[Unit] = []
    for node_id, (start, end) in zip(hit.node_ids, hit.spans):
        if nodes is None or not 0 <= node_id < len(nodes):
            continue
        node = nodes[node_id]
        if not (node.span_start <= start <= end <= node.span_end):
            continue
        text = node.text[start - node.span_start : end - node.span_start]
        cursor = 0
        for piece in [*_SENTENCE_END.split(text)]:
            at = text.find(piece, cursor)
            cursor = at + len(piece)
            stripped = piece.strip()
            if not stripped:
                continue
            lead = piece.index(stripped[0])
            begin = start + at + lead
            units.append(Unit(hit.doc_id, node_id, begin, begin + len(stripped), stripped))
    return units


def render_chunk(chunk: Chunk, structure: bool) -> str:
    """The chunk as the blueprint writer and the reader see it."""
    if not structure or chunk.status in ("plain", "fallback") or not chunk.units:
        return chunk.hit.text
    lines = []
    for n, unit in enumerate(chunk.units, start=1):
        label = f"{n}, {unit.relation} of {unit.parent}" if unit.relation else str(n)
        lines.append(f"({label}) {unit.text}")
    return "\n".join(lines)


def render_evidence(state: QuestionState, structure: bool) -> str:
    text = number_blocks([(c.hit.heading_path, render_chunk(c, structure)) for c in state.chunks])
    edges = [
        f"[{e['from']}] {_EDGE_WORDS[e['relation']]} [{e['to']}]" for e in state.edges if e["relation"] in _EDGE_WORDS
    ]
    if structure and edges:
        text += "\n\nHow the passages relate:\n" + "\n".join(edges)
    return text


def reader_evidence(state: QuestionState, structure: bool) -> str:
    """What the reader sees: the (structured) chunks, then the plan; '' without chunks."""
    if not state.chunks:
        return ""
    plan = "\n".join(f"- [{n}] {step}" for n, step in state.blueprint)
    return f"{render_evidence(state, structure)}\n\nPlan:\n{plan}"


def chunk_dict(number: int, chunk: Chunk, trees: Mapping[str, Sequence[TreeNode]]) -> dict:
    return {
        "passage": number,
        "passage_id": chunk.hit.passage_id,
        "doc_id": chunk.hit.doc_id,
        "heading_path": list(chunk.hit.heading_path),
        "status": chunk.status,
        "raw": chunk.raw,
        "invalid": chunk.invalid,
        "missing": chunk.missing,
        "units": [
            {
                "unit": n,
                "parent": u.parent,
                "relation": u.relation,
                "citation": {"doc_id": u.doc_id, "node_id": u.node_id, "span": [u.start, u.end], "text": u.text},
            }
            for n, u in enumerate(chunk.units, start=1)
        ],
        "citations": [citation_dict(c) for c in passage_citations([chunk.hit], trees)],
    }
