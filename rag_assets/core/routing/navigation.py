"""The routing loop of RDR2: every round is ONE batched engine call across all documents of all
questions.

Round 1 routes each retrieved document's Retrieval SubTree; rounds 2..N route the expansions the
previous round asked for. Every view is first fitted to the token budget (`fit_view`), and the
prompt, the grammar and the parser all use the fitted view; the last round's grammar offers no
EXPAND (nothing would follow it), so the router ends on answers or a refusal. Selected nodes
accumulate per document; the evidence is each document's selected nodes with their heading path,
documents in retrieval order.

Ablations (knobs): no EXPAND (`allow_expand=False`: the prompt offers no [EXPAND] action, an
EXPAND in the output is expelled, one round only), no REFUSE (`allow_refuse=False`), no
structure (`structure=False`: the router sees only the lit content nodes as a flat `id: text`
list, no heading, no indentation, no EXPAND; one round), expand iterations 0..N.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import ChatMessages, LLMEngine
from rag_assets.core.routing.action_format import REFUSAL, parse_router_output, routing_messages, view_action_regex
from rag_assets.core.routing.routed_evidence import RoutedDocument, fill_scores, fit_evidence
from rag_assets.core.routing.subtree import SHORTEN_STEPS, DocumentRouting, SubtreeView, word_count

# Prompts of the ablations. The full method uses `router_io.routing_messages` unchanged (the
# prompt the adapter is trained on); the ablations must not even mention what they take away.
_ACTIONS_NO_EXPAND = (
    "You route a question through one document. You see the document's outline: one line per "
    "node, `id: text`, indented by depth. Headings are always shown; only some paragraphs are.\n"
    "Reply with one action per line and nothing else:\n"
    "[ANSWER] id: first words   - a shown paragraph that helps answer the question"
)
_ACTIONS_FLAT = (
    "You select evidence for a question from one document. You see some of its paragraphs, one "
    "per line, `id: text`.\n"
    "Reply with one action per line and nothing else:\n"
    "[ANSWER] id: first words   - a paragraph that helps answer the question"
)
_REFUSE_LINE = f"\n{REFUSAL}              - if this document cannot answer the question"
_NO_REFUSE_LINE = "\nDo not refuse: choose the most relevant lines."


@dataclass(frozen=True, slots=True)
class RetrievedDocument:
    doc_id: str
    nodes: Sequence[TreeNode]
    hit_node_ids: tuple[int, ...]  # content nodes of the retrieved passages
    # the rank (0 = best) of the passage each hit node came from, across the question's documents
    # (parallel to `hit_node_ids`; empty = unknown): the budget fill's retrieval order
    hit_ranks: tuple[int, ...] = ()


@dataclass(slots=True)
class RoutingKnobs:
    expand_iterations: int = 2  # rounds after the first
    allow_expand: bool = True  # ablation "no EXPAND"
    allow_refuse: bool = True  # ablation "no REFUSE"
    token_budget: int | None = 512  # router input per subtree, in the engine's tokens
    max_new_tokens: int = 64
    adapter: str | None = None
    structure: bool = True  # ablation "no structure": flat list of lit content, no headings, no EXPAND
    # Under an evidence budget, fill the words the router's own selection leaves unused with the
    # best-scored content nodes it was shown and did not select (routers that score nodes only):
    # a router calibrated for decision F1 answers few nodes, so a budget comparison would
    # otherwise trade recall for words silently.
    fill_budget: bool = True
    # how the fill ranks the nodes it may add (FILL_ORDERS); None = the router's own calibrated
    # order (`Router.fill_order`, chosen with the trained encoder), else "router"
    fill_order: str | None = None
    # the cosine over which a scoring router expands a heading (None: its calibrated threshold);
    # routers that write their actions (the LLM) have no threshold and ignore it
    expand_threshold: float | None = None

    @property
    def expands(self) -> bool:
        return self.allow_expand and self.structure


@dataclass(slots=True)
class RoutingResult:
    documents: list[list[RoutedDocument]]  # per question, in retrieval order
    engine_calls_per_round: list[int]
    prompt_tokens: list[int]  # per question
    output_tokens: list[int]
    rounds_per_question: list[int] = field(default_factory=list)  # engine calls each question took part in


def render_flat(
    view: SubtreeView, token_budget: int | None = None, count_tokens: Callable[[str], int] = word_count
) -> str:
    """The "no structure" rendering: only the visible content nodes, `id: text`, no heading, no
    indentation; over budget, lines are shortened (64, 32, ... words) then dropped from the end."""
    return "\n".join(line for _, line in _flat_lines(view, token_budget, count_tokens))


def _flat_lines(
    view: SubtreeView, token_budget: int | None, count_tokens: Callable[[str], int]
) -> list[tuple[int, str]]:
    """(node id, line) of the flat rendering within `token_budget`."""
    nodes = [view.nodes[i] for i in sorted(view.visible_content_ids)]

    def lines(words: int | None) -> list[tuple[int, str]]:
        out = []
        for node in nodes:
            parts = node.text.replace("\n", " ⏎ ").split()
            text = " ".join(parts) if words is None or len(parts) <= words else " ".join(parts[:words]) + " …"
            out.append((node.node_id, f"{node.node_id}: {text}"))
        return out

    def fits(candidate: list[tuple[int, str]]) -> bool:
        return count_tokens("\n".join(line for _, line in candidate)) <= token_budget

    kept = lines(None)
    if token_budget is None or fits(kept):
        return kept
    for words in SHORTEN_STEPS:
        kept = lines(words)
        if fits(kept):
            return kept
    while kept and not fits(kept):
        kept.pop()
    return kept


def fit_view(
    state: DocumentRouting, view: SubtreeView, knobs: RoutingKnobs, count_tokens: Callable[[str], int] = word_count
) -> SubtreeView:
    """The view cut to what the router will be shown within `knobs.token_budget`: the prompt,
    the grammar and the parser then all agree on which nodes exist (a node cut for the budget
    can be neither answered nor expanded now; cut content stays unseen in `state`, so expanding
    its heading later shows it)."""
    if knobs.structure:
        return state.fit(view, knobs.token_budget, count_tokens)
    shown = frozenset(node_id for node_id, _ in _flat_lines(view, knobs.token_budget, count_tokens))
    state.seen -= view.visible_content_ids - shown
    return replace(view, visible_content_ids=view.visible_content_ids & shown, collapsed_heading_ids=frozenset())


def router_messages(
    question: str, view: SubtreeView, knobs: RoutingKnobs, count_tokens: Callable[[str], int] = word_count
) -> ChatMessages:
    """The router chat for one view under `knobs` (the trained prompt for the full method)."""
    if knobs.structure and knobs.allow_expand:
        return routing_messages(
            question, view.render(knobs.token_budget, count_tokens), allow_expand=True, allow_refuse=knobs.allow_refuse
        )
    if knobs.structure:
        system, rendered = _ACTIONS_NO_EXPAND, view.render(knobs.token_budget, count_tokens)
    else:
        system, rendered = _ACTIONS_FLAT, render_flat(view, knobs.token_budget, count_tokens)
    system += _REFUSE_LINE if knobs.allow_refuse else _NO_REFUSE_LINE
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Question: {question}\n\nDocument:\n{rendered}\n\nActions:"},
    ]


def router_regex(view: SubtreeView, knobs: RoutingKnobs, *, final_round: bool = False) -> str:
    """The constrained-decoding grammar for one view under `knobs`: only the actions the prompt
    offers, on the nodes the view allows (the ablations' forbidden actions cannot even be written).
    `final_round`: no EXPAND, since nothing would follow it; the router must answer or refuse."""
    return view_action_regex(view, allow_expand=knobs.expands and not final_round, allow_refuse=knobs.allow_refuse)


@dataclass(frozen=True, slots=True)
class RouteRequest:
    """One view to route: what every router kind is given (the LLM uses the query and the view;
    the oracle also reads `question`; the hit-nodes floor reads `hit_node_ids`)."""

    question: int  # index of the question in the batch
    query: str
    state: DocumentRouting
    view: SubtreeView  # already fitted to the token budget
    hit_node_ids: tuple[int, ...]
    final_round: bool
    # shared by every request of the question, across rounds: what a router keeps of the question
    # between views (the encoder's own choices: the best node score so far)
    question_memo: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RouterReply:
    """A router's output for one view, in the router grammar: it is parsed and validated against
    the view like any generation, whatever produced it."""

    text: str
    prompt_tokens: int = 0
    output_tokens: int = 0
    scores: Mapping[int, float] = field(default_factory=dict)  # node id -> router score (evidence budget order)
    # every visible content node the router scored, selected or not, on the same scale as
    # `scores`: what a budget fill may add (empty for routers that only generate)
    candidates: Mapping[int, float] = field(default_factory=dict)


class Router(Protocol):
    """A router kind: one call routes every view of a round (all documents of all questions).
    `fits_views` (optional, default True): False for routers without a context window (they
    score nodes one by one), whose views are not cut to `knobs.token_budget`. `fill_order`
    (optional, default "router"): the budget fill order the router was calibrated with, used when
    the knobs name none."""

    kind: str

    def count_tokens(self, text: str) -> int: ...

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]: ...


class LLMRouter:
    """The paper's generative router: any `LLMEngine` (base model or a LoRA adapter named in the
    knobs), ONE batched `generate` per round, each view decoded under its own action grammar."""

    kind = "llm"

    def __init__(self, engine: LLMEngine) -> None:
        self.engine = engine

    def count_tokens(self, text: str) -> int:
        return self.engine.count_tokens(text)

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        if not requests:
            return []
        chats = [router_messages(r.query, r.view, knobs, self.engine.count_tokens) for r in requests]
        grammars = [router_regex(r.view, knobs, final_round=r.final_round) for r in requests]
        generations = self.engine.generate(
            chats, adapter=knobs.adapter, max_new_tokens=knobs.max_new_tokens, regex=grammars
        )
        if len(generations) != len(requests):
            raise RuntimeError(f"engine returned {len(generations)} generations for {len(requests)} prompts")
        return [RouterReply(g.text, g.prompt_tokens, g.output_tokens) for g in generations]


def as_router(router: Router | LLMEngine) -> Router:
    """A `Router`; a bare `LLMEngine` is the generative router over that engine."""
    return router if hasattr(router, "route") else LLMRouter(router)  # type: ignore[arg-type]


def route_documents(  # noqa: C901 — the routing rounds with their ablation knobs in one loop: one engine call per round is visible
    questions: Sequence[str],
    retrieved: Sequence[Sequence[RetrievedDocument]],
    router: Router | LLMEngine,
    knobs: RoutingKnobs | None = None,
    *,
    evidence_budgets: Sequence[int | None] | None = None,
    trees: Mapping[str, Sequence[TreeNode]] | None = None,
) -> RoutingResult:
    """Route every retrieved document of every question, one router call per round.

    `evidence_budgets` (per question, words; None = free): after the last round, each question's
    selected nodes are cut to what renders within its budget, best router score first (a router
    without scores keeps its selection order), so routed evidence can be compared with another
    strategy's at the same number of words. With `knobs.fill_budget`, the nodes the router scored
    but did not select compete for the same words on the same score (recorded as filled)."""
    knobs = knobs or RoutingKnobs()
    router = as_router(router)
    states = [[DocumentRouting(d.doc_id, d.nodes) for d in docs] for docs in retrieved]
    routed = [[RoutedDocument(d.doc_id) for d in docs] for docs in retrieved]
    scores: list[dict[tuple[int, int], float]] = [{} for _ in questions]  # (doc index, node) -> score
    candidates: list[dict[tuple[int, int], float]] = [{} for _ in questions]  # every scored content node
    prompt_tokens = [0] * len(questions)
    output_tokens = [0] * len(questions)
    # (question index, document index, view) to route this round
    pending: list[tuple[int, int, SubtreeView]] = [
        (q, i, states[q][i].light(doc.hit_node_ids)) for q, docs in enumerate(retrieved) for i, doc in enumerate(docs)
    ]
    calls: list[int] = []
    memos: list[dict] = [{} for _ in questions]
    rounds = [0] * len(questions)
    rounds_allowed = 1 + (max(knobs.expand_iterations, 0) if knobs.expands else 0)
    # A router that reads each node on its own (the scorers, the bounds) has no context window:
    # its views are not cut to the token budget, so no lit node is lost to the LLM's limit.
    view_knobs = knobs if getattr(router, "fits_views", True) else replace(knobs, token_budget=None)
    fill_order = knobs.fill_order or getattr(router, "fill_order", "router")
    for _round in range(rounds_allowed):
        pending = [
            (q, i, fit_view(states[q][i], v, view_knobs, router.count_tokens))
            for q, i, v in pending
            if v.visible_content_ids or _round == 0
        ]
        if not pending:
            break
        final = _round == rounds_allowed - 1
        requests = [
            RouteRequest(q, questions[q], states[q][i], view, tuple(retrieved[q][i].hit_node_ids), final, memos[q])
            for q, i, view in pending
        ]
        replies = router.route(requests, knobs)
        if len(replies) != len(requests):
            raise RuntimeError(f"{router.kind} router returned {len(replies)} replies for {len(requests)} views")
        calls.append(1)
        for q in {q for q, _, _ in pending}:
            rounds[q] += 1
        following: list[tuple[int, int, SubtreeView]] = []
        for (q, i, view), reply in zip(pending, replies):
            if not knobs.expands:  # an EXPAND the ablation took away is expelled, never followed
                view = replace(view, collapsed_heading_ids=frozenset())
            decision = parse_router_output(reply.text, view)
            doc = routed[q][i]
            doc.router_calls += 1
            doc.expelled += decision.expelled
            doc.collapsed_outputs += decision.collapsed
            doc.refused = doc.refused or (decision.refused and not decision.answer_ids)
            doc.selected_node_ids += [n for n in decision.answer_ids if n not in doc.selected_node_ids]
            for n in decision.answer_ids:
                scores[q].setdefault((i, n), reply.scores.get(n, 0.0))
            for n, score in reply.candidates.items():
                if n in view.visible_content_ids:  # a router's stray ids are never trusted
                    candidates[q][(i, n)] = max(score, candidates[q].get((i, n), float("-inf")))
            prompt_tokens[q] += reply.prompt_tokens
            output_tokens[q] += reply.output_tokens
            if knobs.expands:
                following += [(q, i, states[q][i].expand(h)) for h in decision.expand_ids]
        pending = following
    if evidence_budgets is not None:
        if trees is None:
            trees = {d.doc_id: d.nodes for docs in retrieved for d in docs}
        for q, budget in enumerate(evidence_budgets):
            if budget is None:
                continue
            if knobs.fill_budget:
                fill = {(i, n): s for (i, n), s in candidates[q].items() if n not in routed[q][i].selected_node_ids}
                ranks = {(i, n): r for i, d in enumerate(retrieved[q]) for n, r in zip(d.hit_node_ids, d.hit_ranks)}
                for (i, n), score in fill_scores(fill, scores[q], ranks, fill_order).items():
                    routed[q][i].selected_node_ids.append(n)
                    routed[q][i].filled_node_ids.append(n)
                    scores[q][(i, n)] = score
            fit_evidence(routed[q], trees, budget, scores[q])
    return RoutingResult(routed, calls, prompt_tokens, output_tokens, rounds)
