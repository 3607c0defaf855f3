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

`run_disco` reads as the list of these stages; each stage is one function that builds its chats,
makes its one batched call (`StageRunner.run`) and records the parsed outputs on each question's
`QuestionState` (`disco_evidence.py`: the evidence, its rendering and its structure JSON).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from rag_assets.core.answering.citations import passage_citations
from rag_assets.core.answering.generation.disco_evidence import (
    Chunk,
    QuestionState,
    chunk_dict,
    reader_evidence,
    render_evidence,
    segment,
)
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
from rag_assets.core.answering.reader_prompts import reader_messages, reader_style
from rag_assets.core.answering.types import AnswerOutcome, Retrieve, StrategySpec
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import BatchClock, Generation, LLMEngine

MAX_PAIRS = 3  # chunk pairs per question in the rhetorical graph
UNIT_PROMPT_WORDS = 50
PAIR_PROMPT_WORDS = 60


@dataclass(frozen=True, slots=True)
class QuestionChunk:
    """A chunk of one question's evidence, with the index of that question: a stage batches the
    chunks of every question in one call, and each chat's tokens and counts go to its question."""

    question: int
    chunk: Chunk


@dataclass(frozen=True, slots=True)
class ChunkPair:
    """Two chunks of one question's evidence (0-based, first < second): one edge of its graph."""

    question: int
    first: int
    second: int


@dataclass(frozen=True, slots=True)
class DiscoBatch:
    """What every stage of one `run_disco` call shares."""

    questions: Sequence[str]
    spec: StrategySpec
    stages: StageRunner  # one engine call per stage; tokens, calls and stage names per question
    trees: Mapping[str, Sequence[TreeNode]]  # the documents' trees (units' and citations' exact spans)


@dataclass(frozen=True, slots=True)
class AnsweredQuestion:
    """One question at the end: its evidence's structure, what the reader saw, the reader's answer."""

    question: str
    state: QuestionState
    evidence: str
    answer: Generation


def run_disco(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine,
) -> list[AnswerOutcome]:
    """The four stages in order, each one batched call for all questions (module docstring)."""
    clock = BatchClock(engine, reader)  # started first: the seconds include retrieval
    batch = DiscoBatch(questions, spec, StageRunner(engine, len(questions)), trees)
    states = [gather_chunks(batch, question, retrieve) for question in questions]
    if spec.discourse:  # the ablation (`disco-no-structure`) has neither discourse trees nor graph
        label_discourse(batch, states)
        relate_chunks(batch, states)
    plan_blueprints(batch, states)
    evidences = [reader_evidence(state, spec.discourse) for state in states]
    answers = read_with_plans(batch, evidences, reader)
    seconds = clock.seconds_per_question(len(questions))
    return [
        disco_outcome(batch, q, AnsweredQuestion(question, state, evidence, answer), seconds)
        for q, (question, state, evidence, answer) in enumerate(zip(questions, states, evidences, answers))
    ]


def gather_chunks(batch: DiscoBatch, question: str, retrieve: Retrieve) -> QuestionState:
    """The question's `top_k` chunks, each cut into its discourse units when the stages use them."""
    spec = batch.spec
    hits = list(retrieve(question, spec.retrieval_mode, spec.top_k))[: spec.top_k] if spec.top_k else []
    return QuestionState(chunks=[Chunk(h, segment(h, batch.trees) if spec.discourse else []) for h in hits])


def label_discourse(batch: DiscoBatch, states: Sequence[QuestionState]) -> None:
    """1. Discourse trees: one call for every multi-unit chunk of every question (a one-unit chunk
    has nothing to relate)."""
    multi_unit = [QuestionChunk(q, c) for q, s in enumerate(states) for c in s.chunks if len(c.units) >= 2]
    for state in states:
        for chunk in state.chunks:
            if len(chunk.units) < 2:
                chunk.status = "single-unit"
    generations = batch.stages.run(
        "discourse",
        [
            (
                item.question,
                discourse_messages(
                    [clip_words(u.text, UNIT_PROMPT_WORDS) for u in item.chunk.units[: item.chunk.parsed_units]]
                ),
            )
            for item in multi_unit
        ],
        max_new_tokens=batch.spec.stage_max_new_tokens,
        regex=[discourse_regex(item.chunk.parsed_units) for item in multi_unit],
    )
    for item, generation in zip(multi_unit, generations):
        record_discourse(states[item.question], item.chunk, generation.text)


def record_discourse(state: QuestionState, chunk: Chunk, text: str) -> None:
    """The labelled tree on the chunk's units (`parsed`), or, with no valid relation, the plain
    chunk (`fallback`); invalid lines and unlabelled units are counted either way."""
    parsed = parse_discourse(text, chunk.parsed_units)
    chunk.raw, chunk.invalid, chunk.missing = text, parsed.invalid, parsed.missing
    state.counts["discourse_invalid_lines"] += parsed.invalid
    state.counts["discourse_missing_relations"] += parsed.missing
    if parsed.fallback:
        chunk.status = "fallback"
        state.counts["discourse_fallbacks"] += 1
        return
    chunk.status = "parsed"
    for unit_number, (parent, relation) in parsed.relations.items():
        chunk.units[unit_number - 1].parent = parent
        chunk.units[unit_number - 1].relation = relation


def chunk_pairs(states: Sequence[QuestionState]) -> list[ChunkPair]:
    """Each question's first `MAX_PAIRS` chunk pairs, in (first, second) order, all questions."""
    return [
        ChunkPair(q, first, second)
        for q, state in enumerate(states)
        for first, second in list(combinations(range(len(state.chunks)), 2))[:MAX_PAIRS]
    ]


def relate_chunks(batch: DiscoBatch, states: Sequence[QuestionState]) -> None:
    """2. The rhetorical graph: one call for the chunk pairs of every question. An invalid label
    is counted, and its edge kept with relation None (the reader is not told about it)."""
    pairs = chunk_pairs(states)
    generations = batch.stages.run(
        "graph",
        [
            (
                pair.question,
                graph_messages(
                    batch.questions[pair.question],
                    clip_words(states[pair.question].chunks[pair.first].hit.text, PAIR_PROMPT_WORDS),
                    clip_words(states[pair.question].chunks[pair.second].hit.text, PAIR_PROMPT_WORDS),
                ),
            )
            for pair in pairs
        ],
        max_new_tokens=4,
        regex=GRAPH_REGEX,
    )
    for pair, generation in zip(pairs, generations):
        state, label = states[pair.question], parse_rhetorical(generation.text)
        if label is None:
            state.counts["graph_invalid"] += 1
        state.edges.append({"from": pair.first + 1, "to": pair.second + 1, "relation": label, "raw": generation.text})


def plan_blueprints(batch: DiscoBatch, states: Sequence[QuestionState]) -> None:
    """3. The planning blueprint: one call for every question with evidence (none: no plan)."""
    structure = batch.spec.discourse
    planned = [q for q, s in enumerate(states) if s.chunks]
    generations = batch.stages.run(
        "blueprint",
        [
            (q, blueprint_messages(batch.questions[q], render_evidence(states[q], structure), structure=structure))
            for q in planned
        ],
        max_new_tokens=batch.spec.stage_max_new_tokens,  # a step cut short is still a step
        regex=[blueprint_regex(len(states[q].chunks)) for q in planned],
    )
    for q, generation in zip(planned, generations):
        record_blueprint(states[q], generation.text)


def record_blueprint(state: QuestionState, text: str) -> None:
    """The parsed plan (`parsed`), or, when no step is valid, "use the passages in retrieval
    order" (`fallback`, counted)."""
    parsed = parse_blueprint(text, len(state.chunks))
    state.blueprint_raw = text
    state.counts["blueprint_invalid_lines"] += parsed.invalid
    if parsed.fallback:
        state.blueprint_status = "fallback"
        state.counts["blueprint_fallbacks"] += 1
        state.blueprint = [
            (n, "use what this passage says") for n in range(1, min(len(state.chunks), BLUEPRINT_MAX_STEPS) + 1)
        ]
    else:
        state.blueprint_status, state.blueprint = "parsed", list(parsed.steps)


def read_with_plans(batch: DiscoBatch, evidences: Sequence[str], reader: LLMEngine) -> list[Generation]:
    """4. The blueprint-conditioned reader: one call for all questions (one without evidence gets
    the plain reader prompt). Its tokens are the reader's, not the stages'."""
    style = reader_style(batch.spec.answer_style)
    return batch.stages.run(
        "answer",
        [
            (
                q,
                blueprint_reader_messages(question, evidences[q], style.name)
                if evidences[q]
                else reader_messages(question, "", style.name),
            )
            for q, question in enumerate(batch.questions)
        ],
        max_new_tokens=batch.spec.reader_max_new_tokens or style.max_new_tokens,
        engine=reader,
        charge_tokens=False,
    )


def disco_outcome(batch: DiscoBatch, q: int, answered: AnsweredQuestion, seconds: float) -> AnswerOutcome:
    """Question `q`'s outcome: the answer, cited by its chunks, with every stage's structure."""
    stages, counts = batch.stages, answered.state.counts
    hits = [c.hit for c in answered.state.chunks]
    return AnswerOutcome(
        question=answered.question,
        answer=answered.answer.text,
        evidence=answered.evidence,
        evidence_words=len(answered.evidence.split()),
        citations=passage_citations(hits, batch.trees),
        passage_ids=[h.passage_id for h in hits],
        retrieved_doc_ids=list(dict.fromkeys(h.doc_id for h in hits)),
        router_prompt_tokens=stages.prompt_tokens[q],
        router_output_tokens=stages.output_tokens[q],
        reader_prompt_tokens=answered.answer.prompt_tokens,
        reader_output_tokens=answered.answer.output_tokens,
        engine_calls=stages.calls[q],
        seconds=seconds,
        expelled=counts["discourse_invalid_lines"] + counts["graph_invalid"] + counts["blueprint_invalid_lines"],
        refused_docs=0,
        structure=disco_structure(batch, q, answered.state),
    )


def disco_structure(batch: DiscoBatch, q: int, state: QuestionState) -> dict:
    """The answer's `structure`: discourse trees with their units' spans, graph, blueprint."""
    return {
        "strategy": "disco" if batch.spec.discourse else "disco-no-structure",
        "discourse": batch.spec.discourse,
        "counts": state.counts,
        "stages": batch.stages.stages[q],
        "chunks": [chunk_dict(n, c, batch.trees) for n, c in enumerate(state.chunks, start=1)],
        "graph": state.edges,
        "blueprint": {
            "status": state.blueprint_status or "none",
            "raw": state.blueprint_raw,
            "steps": [{"passage": n, "step": step} for n, step in state.blueprint],
        },
    }
