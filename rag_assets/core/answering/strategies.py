"""Answering strategies, batched across questions: `none`, `rag`, `rdr2`, `contregen` and `disco`.

- `none`: the reader answers from the question alone.
- `rag`: the top_k retrieved passages, numbered, each under its heading path, are the evidence;
  the "citations" are the passages' nodes (at the passages' spans).
- `rdr2` (Retrieve, Document-Route, Read): `passages_per_query` passages are retrieved and
  grouped into their first `top_k` documents (retrieval order); each document's Retrieval
  SubTree is routed (one engine call per round for ALL questions' documents), and the routed
  nodes, numbered, under their heading paths, documents in retrieval order, are the evidence.
  When the router refuses every document (or selects nothing) the reader gets NO evidence and
  answers from the question alone, as the paper does: a refusal is a decision, not a failure to
  paper over with the raw passages.
- `contregen` / `disco`: the generation-side strategies (core/generation): a sub-query tree with
  bottom-up synthesis; discourse trees, a rhetorical graph and a planning blueprint. Several LLM
  stages, each ONE engine call for all questions; their structures ride on `AnswerOutcome.structure`
  and their stage tokens (everything before the reader) on the router token fields.
- `dota` (DoTA-RAG): the question is rewritten by the LLM (one engine call for all questions),
  the namespace router picks the collections to search, hybrid search with the trained reranker
  runs as one LanceDB query, and the top passages are aggregated (kept while within
  `aggregate_words`) into the evidence. `rewrite`, `route_namespaces` and `rerank` are knobs any
  `rag` strategy can turn on as well; `rerank` also `rdr2`'s (the reranked passages choose the
  documents routed and light their nodes).
Every evidence-giving strategy takes a `reorder` knob (core/answering/r4_reordering.py: retrieval order, reverse,
edges-first, or the learned R4 position policy). The rewrite, the namespaces searched and the
order given to the reader are kept per answer (`GatheredEvidence.retrieval`, stored in the
answer's versions next to the original question).
Every strategy ends with ONE reader call for all questions. `seconds` per answer is the batch's
wall time, plus the seconds of any generation a caching engine replayed, divided by its number of
questions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rag_assets.core.answering.answer_ending import complete_answer
from rag_assets.core.answering.r4_reordering import REORDERS, EvidenceItem, PositionPolicy, reorder
from rag_assets.core.answering.readers import number_blocks, reader_messages, reader_style
from rag_assets.core.answering.rewriting import rewrite_queries
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.engines.base import BatchClock, LLMEngine
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.navigation import (
    FILL_ORDERS,
    RetrievedDocument,
    Router,
    RoutingKnobs,
    evidence_groups,
    render_evidence,
    route_documents,
)
from rag_assets.core.routing.samples import documents_in_order

# contregen / disco: the generation-side strategies (core/generation)
GENERATION_KINDS = ("contregen", "disco")
KINDS = ("none", "rag", "rdr2", "dota", *GENERATION_KINDS)
# encoder / llm: trained routers; llm-rank: the llm router's actions ranked by likelihood instead of
# generated; similarity: the untrained encoder; oracle: gold-aware ceiling; hit-nodes: the retrieved
# passages' nodes (the no-learning floor)
ROUTER_KINDS = ("llm", "llm-rank", "encoder", "similarity", "oracle", "hit-nodes")
# The trained kind `rdr2` routes with by default: the one that wins on the real dev sets (README).
DEFAULT_ROUTER_KIND = "encoder"
# router_metrics model labels: each trained kind, and the untrained router it must beat
TRAINED_VS_UNTRAINED = {"encoder": ("encoder", "similarity"), "llm": ("adapter", "base")}
# (query, mode, k) -> hits; strategies that rerank or route namespaces also pass the keywords
# `rerank=True` and `collections=[...]`, which their retrieve must then accept
Retrieve = Callable[..., Sequence[SearchHit]]


class NamespaceRouting(Protocol):
    """The namespace router as strategies use it (core/index/namespace_routing.py `QueryNamespaces`)."""

    def route(self, queries: Sequence[str]) -> list[list[str]]: ...

    def share(self, namespaces: Sequence[str]) -> float: ...


@dataclass(slots=True)
class RetrievalExtras:
    """What the retrieval-side knobs need: the rewriting engine (None = the strategy's engine),
    the namespace router and the learned reorder policy."""

    rewriter: LLMEngine | None = None
    namespaces: NamespaceRouting | None = None
    policy: PositionPolicy | None = None


@dataclass(frozen=True, slots=True)
class StrategySpec:
    name: str  # label stored in answers.strategy
    kind: str  # 'none' | 'rag' | 'rdr2'
    retrieval_mode: str = "hybrid"  # dense | bm25 | hybrid
    top_k: int = 5  # rag: passages given to the reader; rdr2: documents routed
    passages_per_query: int = 20  # rdr2: first-stage passages grouped into top_k documents
    expand_iterations: int = 2
    allow_expand: bool = True
    allow_refuse: bool = True
    structure: bool = True  # False = "no structure": the router sees lit content as a flat list
    adapter: str | None = None  # engine adapter name for the router (None = base model)
    answer_style: str = "short"  # reader prompt: short | list | long
    router_max_new_tokens: int = 64
    reader_max_new_tokens: int | None = None  # None = the answer style's default
    token_budget: int | None = 512  # router input budget per subtree (tokens), as the router was trained
    router: str = "llm"  # rdr2: which router kind routes (ROUTER_KINDS); llm uses `adapter`
    # rdr2: cut each question's routed evidence to the words another strategy gave the reader for
    # that question (e.g. "rag-hybrid"), so both are compared at the same evidence length; None = free
    evidence_budget_from: str | None = None
    fill_budget: bool = True  # rdr2 under a budget: unused words go to the best-scored unselected nodes
    # rdr2: how the fill ranks what it may add (routing.FILL_ORDERS); None = the router's calibrated order
    fill_order: str | None = None
    # contregen: sub-query tree depth (the paper's 2) and sub-queries per node; disco: False = the
    # ablation without discourse trees and rhetorical graph (the blueprint sees plain chunks)
    tree_depth: int = 2
    tree_branching: int = 2
    discourse: bool = True
    stage_max_new_tokens: int = 48  # contregen / disco: output budget of each intermediate stage
    rewrite: bool = False  # rag/dota: search with the LLM's rewrite of the question
    rerank: bool = False  # rag/dota/rdr2: rerank with the trained passage reranker (one LanceDB query)
    route_namespaces: bool = False  # rag/dota: search only the collections the namespace router picks
    reorder: str = "retrieval"  # order of the evidence items the reader sees (REORDERS)
    aggregate_words: int = 0  # rag/dota: keep top passages while within this many words (0 = all top_k)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"strategy {self.name!r}: kind must be one of {KINDS}, not {self.kind!r}")
        if self.top_k < 0 or self.passages_per_query < 0 or self.expand_iterations < 0:
            raise ValueError(f"strategy {self.name!r}: top_k, passages_per_query and expand_iterations must be >= 0")
        reader_style(self.answer_style)
        if self.router not in ROUTER_KINDS:
            raise ValueError(f"strategy {self.name!r}: router must be one of {ROUTER_KINDS}, not {self.router!r}")
        if not (0 <= self.tree_depth <= 3 and 1 <= self.tree_branching <= 4 and self.stage_max_new_tokens >= 8):
            raise ValueError(
                f"strategy {self.name!r}: tree_depth must be 0-3, tree_branching 1-4, stage_max_new_tokens >= 8"
            )
        if self.reorder not in REORDERS:
            raise ValueError(f"strategy {self.name!r}: reorder must be one of {REORDERS}, not {self.reorder!r}")
        if self.aggregate_words < 0:
            raise ValueError(f"strategy {self.name!r}: aggregate_words must be >= 0")
        if self.fill_order is not None and self.fill_order not in FILL_ORDERS:
            raise ValueError(
                f"strategy {self.name!r}: fill_order must be one of {FILL_ORDERS} or unset, not {self.fill_order!r}"
            )

    def knobs(self) -> dict[str, object]:
        """The knobs stored with every answer (answers.knobs)."""
        if self.kind in GENERATION_KINDS:
            return {
                "retrieval_mode": self.retrieval_mode,
                "top_k": self.top_k,
                "tree_depth": self.tree_depth,
                "tree_branching": self.tree_branching,
                "discourse": self.discourse,
                "stage_max_new_tokens": self.stage_max_new_tokens,
            }
        return {
            "retrieval_mode": self.retrieval_mode,
            "top_k": self.top_k,
            "expand_iterations": self.expand_iterations,
            "allow_expand": self.allow_expand,
            "allow_refuse": self.allow_refuse,
            "structure": self.structure,
            "adapter": self.adapter,
            "router": self.router if self.kind == "rdr2" else None,  # only rdr2 routes
            "evidence_budget_from": self.evidence_budget_from,
            **({"fill_budget": self.fill_budget} if self.evidence_budget_from else {}),
            # the retrieval-side knobs only where set, so older rows' knobs read the same
            **{
                k: v
                for k, v in (
                    ("rewrite", self.rewrite),
                    ("rerank", self.rerank),
                    ("route_namespaces", self.route_namespaces),
                    ("reorder", self.reorder if self.reorder != "retrieval" else None),
                    ("aggregate_words", self.aggregate_words),
                    ("fill_order", self.fill_order if self.evidence_budget_from else None),
                )
                if v
            },
        }

    def routing_knobs(self) -> RoutingKnobs:
        return RoutingKnobs(
            expand_iterations=self.expand_iterations,
            allow_expand=self.allow_expand,
            allow_refuse=self.allow_refuse,
            token_budget=self.token_budget,
            max_new_tokens=self.router_max_new_tokens,
            adapter=self.adapter,
            structure=self.structure,
            fill_budget=self.fill_budget,
            fill_order=self.fill_order,
        )


@dataclass(frozen=True, slots=True)
class Citation:
    doc_id: str
    node_id: int
    heading_path: tuple[str, ...]
    text: str  # the document text at [span_start, span_end)
    span_start: int
    span_end: int


@dataclass(slots=True)
class AnswerOutcome:
    """One per question: everything the answers table needs except ids, run and versions."""

    question: str
    answer: str
    evidence: str  # exactly what the reader saw
    evidence_words: int
    citations: list[Citation]
    passage_ids: list[str]
    retrieved_doc_ids: list[str]
    router_prompt_tokens: int
    router_output_tokens: int
    reader_prompt_tokens: int
    reader_output_tokens: int
    engine_calls: int  # engine calls this question took part in (routing rounds + the reader)
    seconds: float  # batch wall time / questions in the batch
    expelled: int
    refused_docs: int
    # contregen / disco: the intermediate structures (sub-query tree; discourse trees, graph,
    # blueprint), JSON-ready, stored with the answer (answers.structure) and walked by `rag trace`
    structure: dict | None = None
    retrieval: dict = field(default_factory=dict)  # rewrite, namespaces, reorder (see GatheredEvidence)


def _node_citation(doc_id: str, node: TreeNode, span: tuple[int, int] | None = None) -> Citation:
    start, end = span or (node.span_start, node.span_end)
    if not (node.span_start <= start <= end <= node.span_end):
        raise ValueError(f"{doc_id} node {node.node_id}: span {start}-{end} lies outside the node")
    text = node.text[start - node.span_start : end - node.span_start]
    return Citation(doc_id, node.node_id, tuple(node.heading_path), text, start, end)


def _passage_citations(hits: Sequence[SearchHit], trees: Mapping[str, Sequence[TreeNode]]) -> list[Citation]:
    out: list[Citation] = []
    seen: set[tuple[str, int, int, int]] = set()
    for hit in hits:
        nodes = trees.get(hit.doc_id)
        if nodes is None:
            continue
        for node_id, span in zip(hit.node_ids, hit.spans):
            key = (hit.doc_id, node_id, *span)
            if key in seen or not 0 <= node_id < len(nodes):
                continue
            seen.add(key)
            out.append(_node_citation(hit.doc_id, nodes[node_id], span))
    return out


def _distinct(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


@dataclass(slots=True)
class GatheredEvidence:
    """What a strategy gives the reader for one question, and what it cost to gather."""

    evidence: str = ""  # exactly what the reader will see
    citations: list[Citation] = field(default_factory=list)
    passage_ids: list[str] = field(default_factory=list)
    retrieved_doc_ids: list[str] = field(default_factory=list)
    router_prompt_tokens: int = 0
    router_output_tokens: int = 0
    routing_rounds: int = 0
    expelled: int = 0
    refused_docs: int = 0
    # retrieval-side lineage: the query searched (original and rewrite), the namespaces searched
    # and their share of the index, search seconds, the order the reader got the items in
    retrieval: dict = field(default_factory=dict)

    @property
    def words(self) -> int:
        return len(self.evidence.split())


def gather_evidence(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine | None = None,
    routers: Mapping[str, Router] | None = None,
    evidence_budgets: Sequence[int | None] | None = None,
    extras: RetrievalExtras | None = None,
) -> list[GatheredEvidence]:
    """Retrieval per question, then (rdr2) ONE router call per routing round for all questions'
    documents. `routers`: the router of each non-LLM kind a spec may name (the LLM router is
    `engine`); `evidence_budgets`: per question, the words rdr2's routed evidence is cut to;
    `extras`: what the rewrite / namespace / learned-reorder knobs use."""
    gathered = [GatheredEvidence() for _ in questions]
    extras = extras or RetrievalExtras()
    if spec.kind in ("rag", "dota") and spec.top_k > 0:
        searched = _retrieval_queries(questions, spec, gathered, engine, extras)
        for out, question, query in zip(gathered, questions, searched):
            hits = _search(query, spec, retrieve, out, extras)
            hits = aggregate_passages(hits, spec.aggregate_words)
            order = reorder(
                spec.reorder, question, [EvidenceItem(h.text, h.score, h.rank) for h in hits], extras.policy
            )
            hits = [hits[i] for i in order]
            out.retrieval["order"] = [h.rank for h in hits]
            out.passage_ids = [h.passage_id for h in hits]
            out.retrieved_doc_ids = _distinct([h.doc_id for h in hits])
            out.evidence = number_blocks([(h.heading_path, h.text) for h in hits])
            out.citations = _passage_citations(hits, trees)
    elif spec.kind == "rdr2":
        documents: list[list[RetrievedDocument]] = []
        for out, question in zip(gathered, questions):
            wanted = max(spec.passages_per_query, spec.top_k) if spec.top_k > 0 else 0
            started = time.perf_counter()
            # with `rerank`, the trained passage reranker orders the passages, and so which documents
            # are routed and which of their nodes are lit
            options = {"rerank": True} if spec.rerank else {}
            hits = list(retrieve(question, spec.retrieval_mode, wanted, **options)) if wanted else []
            if spec.rerank:
                out.retrieval["search_seconds"] = round(time.perf_counter() - started, 4)
            grouped = [(d, ids) for d, ids in documents_in_order(hits, spec.top_k) if d in trees]
            out.passage_ids = [h.passage_id for h in hits]
            out.retrieved_doc_ids = [d for d, _ in grouped]
            ranks = passage_ranks(hits)
            documents.append(
                [RetrievedDocument(d, trees[d], ids, tuple(ranks[d, n] for n in ids)) for d, ids in grouped]
            )
        router: Router | LLMEngine | None = engine if spec.router == "llm" else (routers or {}).get(spec.router)
        if router is None:
            raise ValueError(f"strategy {spec.name!r} routes with the {spec.router!r} router, which was not provided")
        result = route_documents(
            questions, documents, router, spec.routing_knobs(), evidence_budgets=evidence_budgets, trees=trees
        )
        for q, routed in enumerate(result.documents):
            out = gathered[q]
            if spec.reorder != "retrieval":
                items = [
                    EvidenceItem(
                        render_evidence([doc], trees), rank=rank, router_score=float(bool(doc.selected_node_ids))
                    )
                    for rank, doc in enumerate(routed, start=1)
                ]
                order = reorder(spec.reorder, questions[q], items, extras.policy)
                routed = [routed[i] for i in order]
                out.retrieval["order"] = [i + 1 for i in order]
            out.evidence = render_evidence(routed, trees, numbered=True)
            out.citations = [  # in the order the reader sees them
                _node_citation(doc.doc_id, trees[doc.doc_id][n])
                for doc in routed
                for _, ids in evidence_groups(doc, trees[doc.doc_id])
                for n in ids
                if trees[doc.doc_id][n].kind == CONTENT
            ]
            filled = [[doc.doc_id, n] for doc in routed for n in sorted(doc.filled_node_ids)]
            if filled:  # lineage tells the budget fill's nodes from the router's own ANSWERs
                out.retrieval["budget_filled"] = filled
            out.router_prompt_tokens, out.router_output_tokens = result.prompt_tokens[q], result.output_tokens[q]
            out.routing_rounds = result.rounds_per_question[q]
            out.expelled = sum(doc.expelled for doc in routed)
            out.refused_docs = sum(doc.refused for doc in routed)
    return gathered


def passage_ranks(hits: Sequence[SearchHit]) -> dict[tuple[str, int], int]:
    """(doc id, node id) -> rank of the first retrieved passage holding that node (0 = best)."""
    ranks: dict[tuple[str, int], int] = {}
    for rank, hit in enumerate(hits):
        for n in hit.node_ids:
            ranks.setdefault((hit.doc_id, n), rank)
    return ranks


def aggregate_passages(hits: Sequence[SearchHit], words: int) -> list[SearchHit]:
    """DoTA's context aggregation: the top passages, in order, while their words stay within
    `words` (the first one always; 0 = keep all)."""
    if words <= 0:
        return list(hits)
    kept: list[SearchHit] = []
    total = 0
    for hit in hits:
        size = len(hit.text.split())
        if kept and total + size > words:
            break
        kept.append(hit)
        total += size
    return kept


def _retrieval_queries(
    questions: Sequence[str],
    spec: StrategySpec,
    gathered: list[GatheredEvidence],
    engine: LLMEngine | None,
    extras: RetrievalExtras,
) -> list[str]:
    """What each question searches with: the question, or (rewrite) the LLM's rewrite of it,
    all questions in one engine call; the rewrite's tokens count as the strategy's router cost."""
    if not spec.rewrite:
        return list(questions)
    rewriter = extras.rewriter or engine
    if rewriter is None:
        raise ValueError(f"strategy {spec.name!r} rewrites queries but no engine was provided")
    rewrites = rewrite_queries(rewriter, questions)
    for out, rewrite in zip(gathered, rewrites):
        out.retrieval.update(
            {
                "original_query": rewrite.original,
                "retrieval_query": rewrite.query,
                "kept_original": rewrite.kept_original,
            }
        )
        out.router_prompt_tokens += rewrite.prompt_tokens
        out.router_output_tokens += rewrite.output_tokens
        out.routing_rounds += 1
    return [r.query for r in rewrites]


def _search(
    query: str, spec: StrategySpec, retrieve: Retrieve, out: GatheredEvidence, extras: RetrievalExtras
) -> list[SearchHit]:
    """One search, routed to the namespace router's collections and reranked when the spec says."""
    options: dict[str, object] = {}
    if spec.rerank:
        options["rerank"] = True
    if spec.route_namespaces:
        if extras.namespaces is None:
            raise ValueError(f"strategy {spec.name!r} routes namespaces but no namespace router was provided")
        spaces = extras.namespaces.route([query])[0]
        options["collections"] = spaces
        out.retrieval.update({"namespaces": spaces, "share_searched": round(extras.namespaces.share(spaces), 4)})
    started = time.perf_counter()
    hits = list(retrieve(query, spec.retrieval_mode, spec.top_k, **options))[: spec.top_k]
    out.retrieval["search_seconds"] = round(time.perf_counter() - started, 4)
    return hits


def run_strategy(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine | None = None,
    routers: Mapping[str, Router] | None = None,
    evidence_budgets: Sequence[int | None] | None = None,
    extras: RetrievalExtras | None = None,
) -> list[AnswerOutcome]:
    """`gather_evidence` for all questions, then ONE reader call for all questions."""
    questions = list(questions)
    if not questions:
        return []
    reader = reader or engine
    if spec.kind in GENERATION_KINDS:
        from rag_assets.core.answering.generation import run_generation_strategy

        return run_generation_strategy(questions, spec, retrieve=retrieve, trees=trees, engine=engine, reader=reader)
    clock = BatchClock(engine, reader)
    gathered = gather_evidence(
        questions,
        spec,
        retrieve=retrieve,
        trees=trees,
        engine=engine,
        routers=routers,
        evidence_budgets=evidence_budgets,
        extras=extras,
    )
    style = reader_style(spec.answer_style)
    max_new_tokens = spec.reader_max_new_tokens or style.max_new_tokens
    generations = reader.generate(
        [reader_messages(question, g.evidence, style.name) for question, g in zip(questions, gathered)],
        max_new_tokens=max_new_tokens,
    )
    seconds = clock.seconds_per_question(len(questions))
    return [
        AnswerOutcome(
            question=question,
            answer=complete_answer(generation.text, generation.output_tokens, max_new_tokens),
            evidence=g.evidence,
            evidence_words=g.words,
            citations=g.citations,
            passage_ids=g.passage_ids,
            retrieved_doc_ids=g.retrieved_doc_ids,
            router_prompt_tokens=g.router_prompt_tokens,
            router_output_tokens=g.router_output_tokens,
            reader_prompt_tokens=generation.prompt_tokens,
            reader_output_tokens=generation.output_tokens,
            engine_calls=g.routing_rounds + 1,
            seconds=seconds,
            expelled=g.expelled,
            refused_docs=g.refused_docs,
            retrieval=g.retrieval,
        )
        for question, g, generation in zip(questions, gathered, generations)
    ]
