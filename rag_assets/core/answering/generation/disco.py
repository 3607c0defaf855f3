"""Disco-RAG: discourse trees inside chunks, a rhetorical graph across them, a planning blueprint,
and a reader conditioned on all three. No fine-tuning.

Stages, each ONE engine call for all questions (skipped when it has no chat):
1. `discourse`: each retrieved chunk (a passage) is split into elementary discourse units
   deterministically — sentences inside the passage's DST nodes, each with its exact node and
   character span, so a unit is always citable — and the LLM labels the tree: for every unit
   k >= 2, the earlier unit it attaches to and the relation (elaboration, contrast, condition,
   cause, ...). Why not let the LLM segment too (as the paper does)? A 135M model rewrites text
   when it copies it; units it re-typed could no longer be traced to source spans. The relation
   output has a grammar (constrained decoding where the engine has it) and a validating parser:
   invalid lines are counted, never trusted; a chunk with no valid relation falls back to the
   plain chunk (status `fallback`).
2. `graph`: the inter-chunk rhetorical graph. For each pair of a question's chunks (the first
   `MAX_PAIRS`), the LLM names the relation of A to B: support, contradiction, background,
   elaboration or unrelated. LLM-based, not embedding-based: an embedding scores topical
   similarity, which cannot tell support from contradiction; the labels cost one batched call of
   a few output tokens per pair. An invalid label is counted and the edge dropped.
3. `blueprint`: the LLM writes a plan of 1-3 steps `- [n] what to take from passage n` from the
   question and the structured evidence; an invalid plan falls back to "use the passages in
   retrieval order" (status `fallback`).
4. `answer`: the reader gets the chunks with their discourse units, the graph and the plan, and
   is told to follow the plan.
`disco-no-structure` (spec.discourse False) is the paper's ablation: no stage 1 or 2, the
blueprint and the reader see the plain chunks and the plan.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from rag_assets.core.answering.citations import passage_citations
from rag_assets.core.answering.generation.contregen import citation_dict
from rag_assets.core.answering.generation.parsers import parse_blueprint, parse_discourse, parse_rhetorical
from rag_assets.core.answering.generation.prompts import (
    BLUEPRINT_MAX_STEPS,
    GRAPH_REGEX,
    blueprint_messages,
    blueprint_reader_messages,
    blueprint_regex,
    discourse_messages,
    discourse_regex,
    graph_messages,
)
from rag_assets.core.answering.generation.stages import StageRunner, clip_words
from rag_assets.core.answering.readers import number_blocks, reader_messages, reader_style
from rag_assets.core.answering.types import AnswerOutcome, Retrieve, StrategySpec
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import BatchClock, LLMEngine
from rag_assets.core.index.retrieval import SearchHit

MAX_UNITS = 6  # units per chunk the LLM labels (later ones stay in the chunk, unlabelled)
MAX_PAIRS = 3  # chunk pairs per question in the rhetorical graph
UNIT_PROMPT_WORDS = 50
PAIR_PROMPT_WORDS = 60
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


@dataclass(slots=True)
class QuestionState:
    chunks: list[Chunk] = field(default_factory=list)
    edges: list[dict] = field(default_factory=list)
    blueprint: list[tuple[int, str]] = field(default_factory=list)
    blueprint_status: str = ""
    blueprint_raw: str = ""
    counts: dict[str, int] = field(default_factory=dict)


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


def run_disco(  # noqa: C901 — the method's stages in order (discourse, graph, blueprint, read), each one batched call
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine,
) -> list[AnswerOutcome]:
    clock = BatchClock(engine, reader)
    stages = StageRunner(engine, len(questions))
    states = [QuestionState() for _ in questions]
    for state, question in zip(states, questions):
        hits = list(retrieve(question, spec.retrieval_mode, spec.top_k))[: spec.top_k] if spec.top_k else []
        state.chunks = [Chunk(h, segment(h, trees) if spec.discourse else []) for h in hits]
        state.counts = {
            "discourse_invalid_lines": 0,
            "discourse_fallbacks": 0,
            "discourse_missing_relations": 0,
            "graph_invalid": 0,
            "blueprint_invalid_lines": 0,
            "blueprint_fallbacks": 0,
        }

    if spec.discourse:
        # 1. discourse trees: one call for every multi-unit chunk of every question
        todo = [(q, c) for q, s in enumerate(states) for c in s.chunks if len(c.units) >= 2]
        for state in states:
            for chunk in state.chunks:
                if len(chunk.units) < 2:
                    chunk.status = "single-unit"
        generations = stages.run(
            "discourse",
            [
                (q, discourse_messages([clip_words(u.text, UNIT_PROMPT_WORDS) for u in c.units[: c.parsed_units]]))
                for q, c in todo
            ],
            max_new_tokens=spec.stage_max_new_tokens,
            regex=[discourse_regex(c.parsed_units) for _, c in todo],
        )
        for (q, chunk), generation in zip(todo, generations):
            parsed = parse_discourse(generation.text, chunk.parsed_units)
            chunk.raw, chunk.invalid, chunk.missing = generation.text, parsed.invalid, parsed.missing
            states[q].counts["discourse_invalid_lines"] += parsed.invalid
            states[q].counts["discourse_missing_relations"] += parsed.missing
            if parsed.fallback:
                chunk.status = "fallback"
                states[q].counts["discourse_fallbacks"] += 1
                continue
            chunk.status = "parsed"
            for unit_number, (parent, relation) in parsed.relations.items():
                chunk.units[unit_number - 1].parent = parent
                chunk.units[unit_number - 1].relation = relation

        # 2. the rhetorical graph: one call for the chunk pairs of every question
        pairs = [
            (q, i, j) for q, s in enumerate(states) for i, j in list(combinations(range(len(s.chunks)), 2))[:MAX_PAIRS]
        ]
        generations = stages.run(
            "graph",
            [
                (
                    q,
                    graph_messages(
                        questions[q],
                        clip_words(states[q].chunks[i].hit.text, PAIR_PROMPT_WORDS),
                        clip_words(states[q].chunks[j].hit.text, PAIR_PROMPT_WORDS),
                    ),
                )
                for q, i, j in pairs
            ],
            max_new_tokens=4,
            regex=GRAPH_REGEX,
        )
        for (q, i, j), generation in zip(pairs, generations):
            label = parse_rhetorical(generation.text)
            if label is None:
                states[q].counts["graph_invalid"] += 1
            states[q].edges.append({"from": i + 1, "to": j + 1, "relation": label, "raw": generation.text})

    # 3. the planning blueprint: one call for every question with evidence
    planned = [q for q, s in enumerate(states) if s.chunks]
    generations = stages.run(
        "blueprint",
        [
            (q, blueprint_messages(questions[q], render_evidence(states[q], spec.discourse), structure=spec.discourse))
            for q in planned
        ],
        max_new_tokens=spec.stage_max_new_tokens,  # a step cut short is still a step
        regex=[blueprint_regex(len(states[q].chunks)) for q in planned],
    )
    for q, generation in zip(planned, generations):
        state = states[q]
        parsed = parse_blueprint(generation.text, len(state.chunks))
        state.blueprint_raw = generation.text
        state.counts["blueprint_invalid_lines"] += parsed.invalid
        if parsed.fallback:
            state.blueprint_status = "fallback"
            state.counts["blueprint_fallbacks"] += 1
            state.blueprint = [
                (n, "use what this passage says") for n in range(1, min(len(state.chunks), BLUEPRINT_MAX_STEPS) + 1)
            ]
        else:
            state.blueprint_status, state.blueprint = "parsed", list(parsed.steps)

    # 4. the blueprint-conditioned reader: one call for all questions
    evidences = []
    for state in states:
        if not state.chunks:
            evidences.append("")
            continue
        plan = "\n".join(f"- [{n}] {step}" for n, step in state.blueprint)
        evidences.append(f"{render_evidence(state, spec.discourse)}\n\nPlan:\n{plan}")
    style = reader_style(spec.answer_style)
    answers = stages.run(
        "answer",
        [
            (
                q,
                blueprint_reader_messages(question, evidences[q], style.name)
                if evidences[q]
                else reader_messages(question, "", style.name),
            )
            for q, question in enumerate(questions)
        ],
        max_new_tokens=spec.reader_max_new_tokens or style.max_new_tokens,
        engine=reader,
        charge_tokens=False,
    )
    seconds = clock.seconds_per_question(len(questions))

    outcomes = []
    for q, (question, state, answer) in enumerate(zip(questions, states, answers)):
        hits = [c.hit for c in state.chunks]
        structure = {
            "strategy": "disco" if spec.discourse else "disco-no-structure",
            "discourse": spec.discourse,
            "counts": state.counts,
            "stages": stages.stages[q],
            "chunks": [_chunk_dict(n, c, trees) for n, c in enumerate(state.chunks, start=1)],
            "graph": state.edges,
            "blueprint": {
                "status": state.blueprint_status or "none",
                "raw": state.blueprint_raw,
                "steps": [{"passage": n, "step": step} for n, step in state.blueprint],
            },
        }
        outcomes.append(
            AnswerOutcome(
                question=question,
                answer=answer.text,
                evidence=evidences[q],
                evidence_words=len(evidences[q].split()),
                citations=passage_citations(hits, trees),
                passage_ids=[h.passage_id for h in hits],
                retrieved_doc_ids=list(dict.fromkeys(h.doc_id for h in hits)),
                router_prompt_tokens=stages.prompt_tokens[q],
                router_output_tokens=stages.output_tokens[q],
                reader_prompt_tokens=answer.prompt_tokens,
                reader_output_tokens=answer.output_tokens,
                engine_calls=stages.calls[q],
                seconds=seconds,
                expelled=state.counts["discourse_invalid_lines"]
                + state.counts["graph_invalid"]
                + state.counts["blueprint_invalid_lines"],
                refused_docs=0,
                structure=structure,
            )
        )
    return outcomes


def _chunk_dict(number: int, chunk: Chunk, trees: Mapping[str, Sequence[TreeNode]]) -> dict:
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
