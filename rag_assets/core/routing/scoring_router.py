"""Routers that score nodes instead of generating text, and the no-learning bounds.

All of them answer a `RouteRequest` with a `RouterReply` in the router grammar, which the routing
loop parses and validates against the view exactly as it does an LLM's output: lineage, traces,
ablations and router metrics are the same for every kind.

- `ScoringRouter` (kinds `encoder` and `similarity`): a sentence encoder embeds the question and
  every candidate node *in its heading context* (`content_context`, `heading_context`); a visible
  content node scoring at least the answer threshold is ANSWERed (best first, at most
  `max_answers`), a collapsed heading at least the expand threshold is EXPANDed (at most
  `max_expands`; never in the last round); nothing above threshold refuses the document. With
  the packaged MiniLM untrained this is the similarity router; with the encoder fine-tuned on the
  routing actions (`core/routing/encoder_training.py`) it is the trained `encoder` router. Every text is
  embedded once per router (headings and nodes recur across questions and rounds).
  `section_weight` smooths each content node's score with the best score among the shown nodes of
  its own section (`section_smoothed`): the trained router's weight is chosen on the validation
  fold and recorded with it, as is `fill_order`, the order in which an evidence budget's unused
  words are filled (`routing.fill_scores`). With `own_choices` (`routing.own_choices`, chosen on
  held-out questions at a word target) the trained router answers every shown node within a
  margin of its question's best node instead of the threshold's few.
- `OracleRouter`: the oracle teacher's actions on the same views (needs the questions' gold
  labels): the ceiling any router can reach with our retrieval and subtrees.
- `HitNodesRouter`: ANSWER exactly the content nodes of the retrieved passages, never EXPAND, never
  refuse: the no-learning floor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.routing.action_format import REFUSAL, format_actions
from rag_assets.core.routing.navigation import RouteRequest, RouterReply, RoutingKnobs
from rag_assets.core.routing.own_choices import OwnChoices, margin_answers
from rag_assets.core.routing.routed_evidence import FILL_ORDERS
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.routing.teachers import (
    SimilarityScores,
    SimilarityThresholds,
    TextEncoder,
    oracle_label,
    pick_best,
)
from rag_assets.core.text import first_words, word_count

OWN_BEST = "encoder_own_best"  # the question memo's key: its best own-choice score so far
CONTEXT_WORDS = 96  # words of a node's text in its scored context (MiniLM reads 256 word pieces)
PATH_SEPARATOR = " > "
# Content ancestors a content node is read under by default: none, the heading path alone. Two
# (a list's intro and a nested item's parent) gained nothing across the real sets (docs/results.md).
ANCESTOR_LEVELS = 0
PARENT_WORDS = 24  # words of each ancestor read


def content_context(
    nodes: Sequence[TreeNode], node_id: int, words: int = CONTEXT_WORDS, levels: int = ANCESTOR_LEVELS
) -> str:
    """A content node as the encoder reads it: its path (the heading path, title first, then up
    to `levels` content nodes it is nested under, nearest last: a list's intro paragraph, a
    nested item's parent items, `PARENT_WORDS` words each), then its text.

    Why the ancestors are an option: a nested list item often means nothing alone. On nq_wiki's
    NBA records page "58 by the Buffalo Braves at the Boston Celtics" answers "most points scored
    in a quarter" only under its parent item "Most points in a quarter"; a router trained on the
    heading path alone ranked it 225th of the question's 709 shown nodes, one trained and scored
    under two ancestors 26th. 37% of nq_wiki's content nodes, 42% of conditionalqa's and 64% of
    emanual's have a content parent. Yet over every labelled question of the three sets it
    gained nothing and cost conditionalqa budgeted evidence recall (docs/results.md), so the
    default (`ANCESTOR_LEVELS`) reads none."""
    node = nodes[node_id]
    ancestors: list[str] = []
    parent = node.parent_id
    while parent is not None and nodes[parent].kind == CONTENT and len(ancestors) < levels:
        ancestors.append(first_words(nodes[parent].text, PARENT_WORDS))
        parent = nodes[parent].parent_id
    path = PATH_SEPARATOR.join((*node.heading_path, *reversed(ancestors)))
    return f"{path}: {first_words(node.text, words)}"


def heading_context(state: DocumentRouting, heading_id: int, words: int = CONTEXT_WORDS) -> str:
    """A collapsed heading as the encoder reads it: its path down to itself, then a glimpse of its
    own content (what EXPAND would show). Independent of what was already shown, so one text (and
    one embedding) serves every round and question."""
    node = state.nodes[heading_id]
    own = " ".join(state.nodes[c].text for c, h in state.section.items() if h == heading_id)
    path = PATH_SEPARATOR.join(node.heading_path or (node.text,))  # a heading's path ends with itself
    return f"{path}: {first_words(own, words)}"


def section_smoothed(scores: dict[int, float], section: dict[int, int], weight: float) -> dict[int, float]:
    """`(score + weight * best score in the node's section) / (1 + weight)` for each content node.

    Why: evidence clusters in sections (a condition's list items, a procedure's steps, the
    paragraphs under one heading of an article). A node scored alone misses a sibling that only
    makes sense next to the paragraph that names the topic; the section's best node vouches for
    it. On conditionalqa's validation questions this moved gold nodes up the ranking more than any
    per-node feature we tried (lexical overlap, retrieval rank). Dividing by `1 + weight` keeps
    the scores on the cosine scale, so threshold grids need not know the weight."""
    if weight <= 0 or not scores:
        return dict(scores)
    best: dict[int, float] = {}
    for n, s in scores.items():
        key = section.get(n, -1)
        best[key] = max(best.get(key, s), s)
    return {n: (s + weight * best[section.get(n, -1)]) / (1 + weight) for n, s in scores.items()}


def raw_text(nodes: Sequence[TreeNode], node_id: int, words: int = CONTEXT_WORDS) -> str:
    return first_words(nodes[node_id].text, words)


class ScoringRouter:
    """Route by encoder scores (see the module docstring). `contextual=False` scores the bare node
    text and, for headings, the similarity teacher's text: how the similarity teacher scores."""

    fits_views = False  # each node is scored on its own: no context window to fit the view to

    def __init__(
        self,
        encoder: TextEncoder,
        thresholds: SimilarityThresholds,
        *,
        kind: str = "encoder",
        contextual: bool = True,
        section_weight: float = 0.0,
        fill_order: str = "router",
        count_tokens: Callable[[str], int] = word_count,
        own_choices: OwnChoices | None = None,
        ancestor_levels: int = ANCESTOR_LEVELS,
    ) -> None:
        if section_weight < 0:
            raise ValueError(f"section_weight must be >= 0, got {section_weight}")
        if fill_order not in FILL_ORDERS:
            raise ValueError(f"fill_order must be one of {FILL_ORDERS}, got {fill_order!r}")
        self.encoder = encoder
        self.thresholds = thresholds
        self.kind = kind
        self.contextual = contextual
        self.section_weight = section_weight
        self.fill_order = fill_order  # the evidence budget fill's order it was calibrated with
        self.own_choices = own_choices  # None: ANSWER by the calibrated threshold
        self.ancestor_levels = ancestor_levels  # content ancestors a node is read under (0: heading path alone)
        self._count_tokens = count_tokens
        self._vectors: dict[str, np.ndarray] = {}

    def count_tokens(self, text: str) -> int:
        return self._count_tokens(text)

    def _texts(self, state: DocumentRouting, node_ids: Sequence[int]) -> list[str]:
        out = []
        for n in node_ids:
            if state.nodes[n].kind == CONTENT:
                out.append(
                    content_context(state.nodes, n, levels=self.ancestor_levels)
                    if self.contextual
                    else raw_text(state.nodes, n)
                )
            elif self.contextual:
                out.append(heading_context(state, n))
            else:
                from rag_assets.core.routing.teachers import heading_text  # the similarity teacher's own text

                out.append(heading_text(state, n))
        return out

    def _embed(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not missing:
            return
        vectors = np.asarray(self.encoder.encode(missing, progress=False), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        for text, vector in zip(missing, vectors / np.where(norms == 0, 1, norms)):
            self._vectors[text] = vector

    def _cosines(self, query_and_nodes: Sequence[tuple[str, DocumentRouting, Sequence[int], Sequence[int]]]):
        """(content node -> cosine, heading -> cosine) for each (query, state, visible content ids,
        collapsed heading ids): ONE encoder call for every text not embedded before."""
        plans = []
        for query, state, content_ids, heading_ids in query_and_nodes:
            content = list(content_ids)
            headings = list(heading_ids)
            plans.append((query, content, self._texts(state, content), headings, self._texts(state, headings)))
        self._embed([t for query, _, ct, _, ht in plans for t in (query, *ct, *ht)])
        out = []
        for query, content, ctexts, headings, htexts in plans:
            q = self._vectors[query]
            out.append(
                (
                    {n: float(q @ self._vectors[t]) for n, t in zip(content, ctexts)},
                    {h: float(q @ self._vectors[t]) for h, t in zip(headings, htexts)},
                )
            )
        return out

    def score(self, query_and_nodes: Sequence[tuple[str, DocumentRouting, Sequence[int], Sequence[int]]]):
        """SimilarityScores for each (query, state, visible content ids, collapsed heading ids): ONE
        encoder call for every text not embedded before."""
        return [
            self._similarity(answer, expand, state)
            for (answer, expand), (_, state, _, _) in zip(self._cosines(query_and_nodes), query_and_nodes)
        ]

    def _similarity(self, answer: dict[int, float], expand: dict[int, float], state: DocumentRouting):
        """The scores a decision reads: content cosines smoothed by the router's section weight."""
        return SimilarityScores(section_smoothed(answer, state.section, self.section_weight), expand)

    def with_section_weight(
        self,
        weight: float,
        thresholds: SimilarityThresholds | None = None,
        fill_order: str | None = None,
        contextual: bool | None = None,
    ) -> ScoringRouter:
        """The same encoder (and its embedding cache) with another section weight (and thresholds,
        budget fill order, node text); the same own-choice rule."""
        twin = ScoringRouter(
            self.encoder,
            thresholds or self.thresholds,
            kind=self.kind,
            contextual=self.contextual if contextual is None else contextual,
            section_weight=weight,
            fill_order=fill_order or self.fill_order,
            count_tokens=self._count_tokens,
            own_choices=self.own_choices,
            ancestor_levels=self.ancestor_levels,
        )
        twin._vectors = self._vectors
        return twin

    def with_own_choices(self, own_choices: OwnChoices | None) -> ScoringRouter:
        """The same router (and embedding cache) answering by `own_choices` (None: the threshold)."""
        twin = self.with_section_weight(self.section_weight)
        twin.own_choices = own_choices
        return twin

    def decide(
        self,
        state: DocumentRouting,
        scores: SimilarityScores,
        *,
        allow_expand: bool,
        allow_refuse: bool,
        answers: list[int] | None = None,
        expand_threshold: float | None = None,
    ) -> tuple[list[int], list[int]]:
        """ANSWER (`answers` if given, else the best above the threshold) and EXPAND ids (over
        `expand_threshold` if given, else the calibrated one)."""
        t = self.thresholds
        answers = pick_best(scores.answer, t.answer, t.max_answers) if answers is None else answers
        expand_over = t.expand if expand_threshold is None else expand_threshold
        expands = pick_best(scores.expand, expand_over, t.max_expands) if allow_expand else []
        if not answers and not expands and not allow_refuse and scores.answer:
            answers = pick_best(scores.answer, float("-inf"), 1)  # "no refuse": the best shown node
        return answers, expands

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        queries = [
            (r.query, r.state, sorted(r.view.visible_content_ids), sorted(r.view.collapsed_heading_ids))
            for r in requests
        ]
        cosines = self._cosines(queries)
        own = self._own_answers(requests, [answer for answer, _ in cosines])
        replies = []
        for k, (request, (answer, expand)) in enumerate(zip(requests, cosines)):
            scores = self._similarity(answer, expand, request.state)
            answers, expands = self.decide(
                request.state,
                scores,
                allow_expand=knobs.expands and not request.final_round,
                allow_refuse=knobs.allow_refuse,
                answers=own[k] if own is not None else None,
                expand_threshold=knobs.expand_threshold,
            )
            nodes = request.state.nodes
            text = format_actions([(n, nodes[n].text) for n in answers], [(h, nodes[h].text) for h in expands])
            replies.append(RouterReply(text, scores={n: scores.answer[n] for n in answers}, candidates=scores.answer))
        return replies

    def _own_answers(self, requests: Sequence[RouteRequest], cosines: Sequence[dict[int, float]]):
        """Per request, the nodes `own_choices` answers (None without the rule): within the margin
        of the best smoothed score its question reached so far (this round's views and earlier
        rounds', kept in the question's memo)."""
        if self.own_choices is None:
            return None
        weight, margin = self.own_choices.section_weight, self.own_choices.margin
        smoothed = [section_smoothed(c, r.state.section, weight) for r, c in zip(requests, cosines)]
        for request, scores in zip(requests, smoothed):
            if scores:
                best = max(scores.values())
                request.question_memo[OWN_BEST] = max(request.question_memo.get(OWN_BEST, best), best)
        return [
            margin_answers(scores, r.question_memo[OWN_BEST], margin) if scores else []
            for r, scores in zip(requests, smoothed)
        ]


class OracleRouter:
    """The oracle teacher's actions at inference (gold-aware: a ceiling, never a deployable router)."""

    kind = "oracle"
    fits_views = False  # bounds see what the scoring routers see

    def __init__(self, questions: Sequence[Question], count_tokens: Callable[[str], int] = word_count) -> None:
        self.questions = list(questions)
        self._count_tokens = count_tokens

    def count_tokens(self, text: str) -> int:
        return self._count_tokens(text)

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        replies = []
        for r in requests:
            label = oracle_label(r.state, r.view, self.questions[r.question])
            expands = label.expand_ids if knobs.expands and not r.final_round else ()
            answers = label.answer_ids
            if not answers and not expands and not knobs.allow_refuse:
                answers = tuple(sorted(set(r.hit_node_ids) & r.view.visible_content_ids)[:1])
            nodes = r.state.nodes
            replies.append(
                RouterReply(
                    format_actions([(n, nodes[n].text) for n in answers], [(h, nodes[h].text) for h in expands])
                )
            )
        return replies


class HitNodesRouter:
    """ANSWER the retrieved passages' content nodes that the view shows: the floor of routing."""

    kind = "hit-nodes"
    fits_views = False

    def __init__(self, count_tokens: Callable[[str], int] = word_count) -> None:
        self._count_tokens = count_tokens

    def count_tokens(self, text: str) -> int:
        return self._count_tokens(text)

    def route(self, requests: Sequence[RouteRequest], knobs: RoutingKnobs) -> list[RouterReply]:
        replies = []
        for r in requests:
            hits = sorted(set(r.hit_node_ids) & r.view.visible_content_ids)
            nodes = r.state.nodes
            text = format_actions([(n, nodes[n].text) for n in hits], []) if hits else REFUSAL
            # Retrieval order is the floor's ranking: earlier hits score higher.
            order = {n: i for i, n in enumerate(dict.fromkeys(r.hit_node_ids))}
            replies.append(RouterReply(text, scores={n: -float(order.get(n, 0)) for n in hits}))
        return replies
