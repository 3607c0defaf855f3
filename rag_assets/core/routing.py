"""The routing loop of RDR2: every round is ONE batched engine call across all documents of all
questions.

Round 1 routes each retrieved document's Retrieval SubTree; rounds 2..N route the expansions the
previous round asked for. Selected nodes accumulate per document; the evidence is each
document's selected nodes with their heading path, documents in retrieval order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.router_io import ACTION_REGEX, parse_router_output, routing_messages
from rag_assets.core.subtree import DocumentRouting, SubtreeView
from rag_assets.core.tree import TreeNode


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    doc_id: str
    nodes: Sequence[TreeNode]
    hit_node_ids: tuple[int, ...]  # content nodes of the retrieved passages


@dataclass(slots=True)
class RoutingKnobs:
    expand_iterations: int = 2  # rounds after the first
    allow_expand: bool = True  # ablation "no EXPAND"
    allow_refuse: bool = True  # ablation "no REFUSE"
    token_budget: int | None = 1024
    max_new_tokens: int = 64
    adapter: str | None = None


@dataclass(slots=True)
class RoutedDocument:
    doc_id: str
    selected_node_ids: list[int] = field(default_factory=list)
    refused: bool = False
    expelled: int = 0
    collapsed_outputs: int = 0
    router_calls: int = 0


@dataclass(slots=True)
class RoutingResult:
    documents: list[list[RoutedDocument]]  # per question, in retrieval order
    engine_calls_per_round: list[int]
    prompt_tokens: list[int]  # per question
    output_tokens: list[int]


def route_documents(questions: Sequence[str], retrieved: Sequence[Sequence[RetrievedDocument]],
                    engine: LLMEngine, knobs: RoutingKnobs | None = None) -> RoutingResult:
    knobs = knobs or RoutingKnobs()
    states = [[DocumentRouting(d.doc_id, d.nodes) for d in docs] for docs in retrieved]
    routed = [[RoutedDocument(d.doc_id) for d in docs] for docs in retrieved]
    prompt_tokens = [0] * len(questions)
    output_tokens = [0] * len(questions)
    # (question index, document index, view) to route this round
    pending: list[tuple[int, int, SubtreeView]] = [
        (q, i, states[q][i].light(doc.hit_node_ids)) for q, docs in enumerate(retrieved) for i, doc in enumerate(docs)
    ]
    calls: list[int] = []
    for _round in range(1 + max(knobs.expand_iterations, 0)):
        pending = [(q, i, v) for q, i, v in pending if v.visible_content_ids or _round == 0]
        if not pending:
            break
        batch = [routing_messages(questions[q], view.render(knobs.token_budget, engine.count_tokens),
                                  allow_expand=knobs.allow_expand, allow_refuse=knobs.allow_refuse)
                 for q, _, view in pending]
        generations = engine.generate(batch, adapter=knobs.adapter, max_new_tokens=knobs.max_new_tokens,
                                      regex=ACTION_REGEX)
        calls.append(1)
        following: list[tuple[int, int, SubtreeView]] = []
        for (q, i, view), generation in zip(pending, generations):
            decision = parse_router_output(generation.text, view)
            doc = routed[q][i]
            doc.router_calls += 1
            doc.expelled += decision.expelled
            doc.collapsed_outputs += decision.collapsed
            doc.refused = doc.refused or (decision.refused and not decision.answer_ids)
            doc.selected_node_ids += [n for n in decision.answer_ids if n not in doc.selected_node_ids]
            prompt_tokens[q] += generation.prompt_tokens
            output_tokens[q] += generation.output_tokens
            if knobs.allow_expand:
                following += [(q, i, states[q][i].expand(h)) for h in decision.expand_ids]
        pending = following
    return RoutingResult(routed, calls, prompt_tokens, output_tokens)


def render_evidence(documents: Sequence[RoutedDocument], trees: dict[str, Sequence[TreeNode]]) -> str:
    """Selected nodes under their heading path, document by document, in retrieval order."""
    blocks = []
    for doc in documents:
        if not doc.selected_node_ids:
            continue
        nodes = trees[doc.doc_id]
        lines = [f"# {' > '.join(nodes[n].heading_path)}\n{nodes[n].text}" for n in sorted(doc.selected_node_ids)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
