"""Routing samples: Retrieval SubTrees of training questions, as the router sees them.

For each training question the top documents are retrieved, each document's subtree is rendered
as the router would see it (the *initial* view, fitted to the token budget), and expansion views
are added (a collapsed heading unfolded) so EXPAND and post-expansion decisions are represented
too. Identical (question, rendering) pairs are kept once. `restore` rebuilds the view a stored
sample was rendered from."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rag_assets.core.corpus.question_sets import Question, stable_split
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView, word_count
from rag_assets.core.routing.teachers.oracle import oracle_label

SYNTHETIC_QID_PREFIX = "synthetic:"  # qids of the corpus-made questions (core/corpus/synthetic_questions.py)


@dataclass(frozen=True, slots=True)
class RoutingSample:
    subtree_id: str
    qid: str
    query: str
    doc_id: str
    view: str  # "initial" or "expand:<heading id>"
    rendered: str
    visible_ids: tuple[int, ...]
    collapsed_ids: tuple[int, ...]
    seen_ids: tuple[int, ...]  # content shown up to and including this view


def documents_in_order(hits: Sequence[SearchHit], top_docs: int) -> list[tuple[str, tuple[int, ...]]]:
    """(doc_id, hit content node ids) for the first `top_docs` documents, in retrieval order."""
    order: dict[str, list[int]] = {}
    for hit in hits:
        if hit.doc_id not in order and len(order) >= top_docs:
            continue
        order.setdefault(hit.doc_id, []).extend(n for n in hit.node_ids if n not in order.get(hit.doc_id, []))
    return [(doc_id, tuple(ids)) for doc_id, ids in order.items()]


def _sample(question: Question, doc: DocumentRouting, name: str, view: SubtreeView, rendered: str) -> RoutingSample:
    digest = hashlib.sha256(f"{question.query}\x1e{doc.doc_id}\x1e{rendered}".encode()).hexdigest()[:16]
    return RoutingSample(
        digest,
        question.qid,
        question.query,
        doc.doc_id,
        name,
        rendered,
        tuple(sorted(view.visible_content_ids)),
        tuple(sorted(view.collapsed_heading_ids)),
        tuple(sorted(doc.seen)),
    )


def build_routing_samples(
    questions: Sequence[Question],
    retrieve: Callable[[str], Sequence[SearchHit]],
    trees: dict[str, Sequence[TreeNode]],
    *,
    top_docs: int = 3,
    expansion_views: int = 1,
    token_budget: int | None = 512,
    count_tokens: Callable[[str], int] = word_count,
) -> list[RoutingSample]:
    samples: dict[str, RoutingSample] = {}
    for question in questions:
        for doc_id, hit_ids in documents_in_order(retrieve(question.query), top_docs):
            if doc_id not in trees:
                continue
            doc = DocumentRouting(doc_id, trees[doc_id])
            # Samples hold the view as fitted to the budget: the teacher labels, the stored ids and
            # the routing grammar then name only nodes the rendering shows.
            initial = doc.fit(doc.light(hit_ids), token_budget, count_tokens)
            sample = _sample(question, doc, "initial", initial, initial.render())
            samples.setdefault(sample.subtree_id, sample)
            # Expand first what the oracle would (so post-expansion decisions are learnt), then others.
            wanted = oracle_label(doc, initial, question).expand_ids
            others = [h for h in sorted(initial.collapsed_heading_ids) if h not in wanted and h != 0]
            for heading_id in [*wanted, *others][:expansion_views]:
                view = doc.fit(doc.expand(heading_id), token_budget, count_tokens)
                if view.visible_content_ids:
                    sample = _sample(question, doc, f"expand:{heading_id}", view, view.render())
                    samples.setdefault(sample.subtree_id, sample)
    return list(samples.values())


def restore(sample: RoutingSample, nodes: Sequence[TreeNode]) -> tuple[DocumentRouting, SubtreeView]:
    """The document state and view a stored sample was rendered from."""
    doc = DocumentRouting(sample.doc_id, nodes)
    doc.seen = set(sample.seen_ids)
    return doc, SubtreeView(
        sample.doc_id, doc.title, doc.nodes, frozenset(sample.visible_ids), frozenset(sample.collapsed_ids)
    )


def routing_fold(qid: str, validation_fraction: float) -> str:
    """'train' or 'validation' by question (all views of a question in one fold). Salted: the
    question split already used the bare qid's hash, so the two would correlate."""
    in_train = stable_split(f"routing-fold/{qid}", (1 - validation_fraction, 0.0)) == "train"
    return "train" if in_train else "validation"


def sample_from_row(row: Sequence) -> RoutingSample:
    """A RoutingSample from a `routing_subtrees` row (its fields in order; id lists as tuples)."""
    return RoutingSample(*(tuple(v) if isinstance(v, list) else v for v in row))


@dataclass(frozen=True, slots=True)
class RoutingExample:
    """One labelled view: the router's input and the teacher's actions on it."""

    query: str
    state: DocumentRouting
    view: SubtreeView
    answer_ids: frozenset[int]
    expand_ids: frozenset[int]
