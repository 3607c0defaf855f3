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
The strategies are run, and their evidence read, by core/answering/strategy_runner.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.answering.citations import node_citation, passage_citations
from rag_assets.core.answering.line_item_lookup import join_looked_up, looked_up_rows
from rag_assets.core.answering.r4_reordering import EvidenceItem, reorder
from rag_assets.core.answering.reader_prompts import number_blocks
from rag_assets.core.answering.rewriting import rewrite_queries
from rag_assets.core.answering.types import (
    KINDS,
    Citation,
    RetrievalExtras,
    Retrieve,
    StrategySpec,
)
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.navigation import RetrievedDocument, Router, route_documents
from rag_assets.core.routing.routed_evidence import evidence_groups, render_evidence
from rag_assets.core.routing.samples import documents_in_order


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
    """What `spec` gives the reader for each question, by its kind's gatherer (`EVIDENCE_GATHERERS`).
    `routers`: the router of each non-LLM kind a spec may name (the LLM router is `engine`);
    `evidence_budgets`: per question, the words rdr2's routed evidence is cut to; `extras`: what
    the rewrite / namespace / learned-reorder knobs use."""
    inputs = EvidenceInputs(retrieve, trees, engine, routers, evidence_budgets, extras or RetrievalExtras())
    gathered = [GatheredEvidence() for _ in questions]
    EVIDENCE_GATHERERS[spec.kind](list(questions), spec, inputs, gathered)
    return gathered


@dataclass(frozen=True, slots=True)
class EvidenceInputs:
    """What evidence is gathered with besides the questions and the spec."""

    retrieve: Retrieve
    trees: Mapping[str, Sequence[TreeNode]]
    engine: LLMEngine | None
    routers: Mapping[str, Router] | None
    evidence_budgets: Sequence[int | None] | None
    extras: RetrievalExtras


def _no_evidence(questions: list[str], spec: StrategySpec, inputs: EvidenceInputs, out: list[GatheredEvidence]) -> None:
    """`none` (and the generation-side kinds, which gather their own): the reader gets no evidence."""


def _passages(
    questions: list[str], spec: StrategySpec, inputs: EvidenceInputs, gathered: list[GatheredEvidence]
) -> None:
    """`rag` / `dota`: the top passages (of the rewrite, in the routed namespaces, reranked and
    aggregated as the spec says), in the order the reorder knob gives, numbered under their headings."""
    if spec.top_k <= 0:
        return
    searched = _retrieval_queries(questions, spec, gathered, inputs.engine, inputs.extras)
    for out, question, query in zip(gathered, questions, searched):
        hits = _search(query, spec, inputs.retrieve, out, inputs.extras)
        hits = aggregate_passages(hits, spec.aggregate_words)
        order = reorder(
            spec.reorder, question, [EvidenceItem(h.text, h.score, h.rank) for h in hits], inputs.extras.policy
        )
        hits = [hits[i] for i in order]
        out.retrieval["order"] = [h.rank for h in hits]
        out.passage_ids = [h.passage_id for h in hits]
        out.retrieved_doc_ids = _distinct([h.doc_id for h in hits])
        out.evidence = number_blocks([(h.heading_path, h.text) for h in hits])
        out.citations = passage_citations(hits, inputs.trees)


def _retrieved_documents(
    question: str, spec: StrategySpec, inputs: EvidenceInputs, out: GatheredEvidence
) -> list[RetrievedDocument]:
    """rdr2's first stage for one question: the passages, grouped into their first top_k documents."""
    trees = inputs.trees
    wanted = max(spec.passages_per_query, spec.top_k) if spec.top_k > 0 else 0
    started = time.perf_counter()
    # with `rerank`, the trained passage reranker orders the passages, and so which documents
    # are routed and which of their nodes are lit
    options = {"rerank": True} if spec.rerank else {}
    hits = list(inputs.retrieve(question, spec.retrieval_mode, wanted, **options)) if wanted else []
    if spec.rerank:
        out.retrieval["search_seconds"] = round(time.perf_counter() - started, 4)
    grouped = [(d, ids) for d, ids in documents_in_order(hits, spec.top_k) if d in trees]
    out.passage_ids = [h.passage_id for h in hits]
    out.retrieved_doc_ids = [d for d, _ in grouped]
    ranks = passage_ranks(hits)
    return [RetrievedDocument(d, trees[d], ids, tuple(ranks[d, n] for n in ids)) for d, ids in grouped]


def _routed(questions: list[str], spec: StrategySpec, inputs: EvidenceInputs, gathered: list[GatheredEvidence]) -> None:
    """`rdr2`: retrieval per question, then ONE router call per routing round for all questions'
    documents; the routed nodes, numbered under their heading paths, are the evidence."""
    documents = [_retrieved_documents(q, spec, inputs, out) for q, out in zip(questions, gathered)]
    router: Router | LLMEngine | None = (
        inputs.engine if spec.router == "llm" else (inputs.routers or {}).get(spec.router)
    )
    if router is None:
        raise ValueError(f"strategy {spec.name!r} routes with the {spec.router!r} router, which was not provided")
    looked_up, budgets = _line_items(questions, documents, spec, inputs.evidence_budgets)
    result = route_documents(
        questions, documents, router, spec.routing_knobs(), evidence_budgets=budgets, trees=inputs.trees
    )
    for q, routed in enumerate(result.documents):
        out = gathered[q]
        if looked_up[q]:
            join_looked_up(routed, looked_up[q])
            out.retrieval["line_items"] = [[routed[i].doc_id, n] for i, n in looked_up[q]]
        routed = _reordered(questions[q], spec, routed, inputs, out)
        _read_routed(out, routed, inputs.trees)
        out.router_prompt_tokens, out.router_output_tokens = result.prompt_tokens[q], result.output_tokens[q]
        out.routing_rounds = result.rounds_per_question[q]


def _line_items(
    questions: list[str],
    documents: list[list[RetrievedDocument]],
    spec: StrategySpec,
    budgets: Sequence[int | None] | None,
) -> tuple[list[list[tuple[int, int]]], Sequence[int | None] | None]:
    """Each question's looked-up statement rows (document index, node id), and the evidence
    budgets left to the router: the rows come first, the router's choices fill the words left."""
    looked_up: list[list[tuple[int, int]]] = [[] for _ in questions]
    if not spec.line_items:
        return looked_up, budgets
    left = list(budgets) if budgets is not None else [None] * len(questions)
    for q, (question, docs) in enumerate(zip(questions, documents)):
        looked_up[q], words = looked_up_rows(question, [(d.doc_id, d.nodes) for d in docs], left[q])
        left[q] = None if left[q] is None else left[q] - words
    return looked_up, (left if budgets is not None else None)


def _reordered(question: str, spec: StrategySpec, routed: list, inputs: EvidenceInputs, out: GatheredEvidence) -> list:
    """The routed documents in the order the reorder knob gives (retrieval order by default)."""
    if spec.reorder == "retrieval":
        return routed
    items = [
        EvidenceItem(render_evidence([doc], inputs.trees), rank=rank, router_score=float(bool(doc.selected_node_ids)))
        for rank, doc in enumerate(routed, start=1)
    ]
    order = reorder(spec.reorder, question, items, inputs.extras.policy)
    out.retrieval["order"] = [i + 1 for i in order]
    return [routed[i] for i in order]


def _read_routed(out: GatheredEvidence, routed: list, trees: Mapping[str, Sequence[TreeNode]]) -> None:
    """The evidence, citations and routing counts of one question's routed documents."""
    out.evidence = render_evidence(routed, trees, numbered=True)
    out.citations = [  # in the order the reader sees them
        node_citation(doc.doc_id, trees[doc.doc_id][n])
        for doc in routed
        for _, ids in evidence_groups(doc, trees[doc.doc_id])
        for n in ids
        if trees[doc.doc_id][n].kind == CONTENT
    ]
    filled = [[doc.doc_id, n] for doc in routed for n in sorted(doc.filled_node_ids)]
    if filled:  # lineage tells the budget fill's nodes from the router's own ANSWERs
        out.retrieval["budget_filled"] = filled
    out.expelled = sum(doc.expelled for doc in routed)
    out.refused_docs = sum(doc.refused for doc in routed)


EvidenceGatherer = Callable[[list[str], StrategySpec, EvidenceInputs, list[GatheredEvidence]], None]
# The one place a strategy kind's evidence is chosen: kind -> its gatherer (every kind in KINDS).
EVIDENCE_GATHERERS: dict[str, EvidenceGatherer] = {
    "none": _no_evidence,
    "rag": _passages,
    "rdr2": _routed,
    "dota": _passages,
    "contregen": _no_evidence,
    "disco": _no_evidence,
}
assert tuple(EVIDENCE_GATHERERS) == KINDS, "every strategy kind needs exactly one evidence gatherer"


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
