"""The answering types every strategy shares: the strategy spec and its kinds, the retrieval
callable, the retrieval-side extras, and what a strategy returns per question (`AnswerOutcome`
with its `Citation`s). Strategies, the generation-side systems, the answer store and the assets
all import them from here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from rag_assets.core.answering.r4_reordering import REORDERS, PositionPolicy
from rag_assets.core.answering.reader_prompts import reader_style
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.navigation import Router, RoutingKnobs
from rag_assets.core.routing.routed_evidence import FILL_ORDERS

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
# generated: the reader writes the answer; extractive: the best sentence of the evidence is it
ANSWER_FORMS = ("generated", "extractive")
EXTRACTIVE_KINDS = ("rag", "rdr2", "dota")  # the kinds that gather evidence before the reader


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
    # scores (question, text) pairs: picks an extractive answer's sentence and attributes an answer
    # that shares no word with its evidence (the trained passage reranker, else the embedder)
    answer_scorer: PairScorer | None = None
    # below this relevance, scored by `relevance_scorer` (the embedder: trained on no question), the
    # documents are said not to answer (core/answering/no_answer.py); None: never
    relevance_floor: float | None = None
    relevance_scorer: PairScorer | None = None
    # which of a question's terms occur in the documents searched: too few, and the documents are
    # said not to answer (core/answering/known_terms.py); None: not asked
    term_lookup: TermLookup | None = None


class TermLookup(Protocol):
    """Which terms occur in the documents searched (core/index/term_lookup.py `IndexTerms`)."""

    def known(self, terms: Sequence[str]) -> set[str]: ...


class PairScorer(Protocol):
    """Scores texts against a query (the trained passage reranker's `scores`, or the embedder's)."""

    def scores(self, query: str, texts: Sequence[str]) -> list[float]: ...


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
    # rdr2: the cosine over which a scoring router (encoder, similarity) expands a heading; None = the
    # router's calibrated threshold. The ask policy learns it per collection (policy/routing_choice.py)
    expand_threshold: float | None = None
    # rdr2: the statement rows naming the line items a question names join the routed evidence
    # (core/answering/line_item_lookup.py); False = the router's choices alone
    line_items: bool = True
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
    # generated: the reader writes the answer; extractive: the best sentence of the evidence is the
    # answer (core/answering/extractive.py), no reader call
    answer_form: str = "generated"
    # extractive: a figure question answered by a figure computed from cited cells, a yes/no over
    # a measure by the sign of one (figure_answers.py, measure_verdicts.py); False = the quote alone
    figures: bool = True

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
        if self.answer_form not in ANSWER_FORMS:
            raise ValueError(
                f"strategy {self.name!r}: answer_form must be one of {ANSWER_FORMS}, not {self.answer_form!r}"
            )
        if self.answer_form == "extractive" and self.kind not in EXTRACTIVE_KINDS:
            raise ValueError(f"strategy {self.name!r}: extractive answers need one of {EXTRACTIVE_KINDS}")
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
                    ("passages_per_query", self.passages_per_query if self.kind == "rdr2" else None),
                    ("expand_threshold", self.expand_threshold),
                    ("line_items", self.line_items if self.kind == "rdr2" else None),
                    ("answer_form", self.answer_form if self.answer_form != "generated" else None),
                    ("figures", "off" if self.answer_form == "extractive" and not self.figures else None),
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
            expand_threshold=self.expand_threshold,
        )


@dataclass(frozen=True, slots=True)
class Citation:
    doc_id: str
    node_id: int
    heading_path: tuple[str, ...]
    text: str  # the document text at [span_start, span_end)
    span_start: int
    span_end: int
    pages: str = ""  # "p. 12" / "pp. 12-13" in a PDF or Word document, "" where there are no pages


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
    answer_form: str = "generated"  # generated | extractive (core/answering/extractive.py)
    echo: str = ""  # echoed prompt text cut off: '' | stripped | refused | looped | garbled (core/answering/echo.py)
    # the first `supporting` citations are the ones the answer rests on (core/answering/attribution.py),
    # the rest is evidence also given; -1 = not attributed
    supporting: int = -1
    attribution: str = ""  # markers | overlap | extractive | figure | unsupported (cross-encoder: older rows)
    # generated was asked, the reader wrote nothing: the answer is the extractive one of the same
    # evidence (core/answering/extractive.py `answered_when_empty`)
    reader_empty: bool = False
    # "Yes" | "No": the reader's scored verdict put before a quote answering a yes/no question
    # (core/answering/verdict.py); '' where none was given
    verdict: str = ""
    # the best score of a sentence of the evidence for the question, where a relevance floor was
    # applied; below it the answer says it is not found (core/answering/no_answer.py)
    relevance: float | None = None
    not_found: bool = False
    # why the answer is not found where the relevance floor is not the reason (the question's words
    # are unknown to the documents: core/answering/known_terms.py); '' otherwise
    not_found_note: str = ""


@dataclass(frozen=True, slots=True)
class StrategyInputs:
    """What a strategy runs with besides its questions and spec: the retrieval, the trees, the
    router/stage engine and the reader, and (rdr2 / retrieval-side knobs) the non-LLM routers,
    per-question evidence budgets and the retrieval extras."""

    retrieve: Retrieve
    trees: Mapping[str, Sequence[TreeNode]]
    engine: LLMEngine
    reader: LLMEngine
    routers: Mapping[str, Router] | None = None
    evidence_budgets: Sequence[int | None] | None = None
    extras: RetrievalExtras | None = None


# (questions, spec, inputs) -> one outcome per question, in order
StrategyRunner = Callable[[list[str], StrategySpec, StrategyInputs], list[AnswerOutcome]]
