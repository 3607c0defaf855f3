"""Stored routing samples in use: loaded with their teacher labels (to train either router kind),
and routed by any router kind to measure it (ANS-F1, EXP-PRE, REF-ACC, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.routing.action_format import (
    RouterDecision,
    parse_router_output,
    routing_messages,
    view_action_regex,
)
from rag_assets.core.routing.metrics import RoutingGold, RoutingPrediction, RoutingScores, score_routing
from rag_assets.core.routing.navigation import Router, RouteRequest, RoutingKnobs
from rag_assets.core.routing.samples import (
    SYNTHETIC_QID_PREFIX,
    RoutingExample,
    RoutingSample,
    restore,
    sample_from_row,
)
from rag_assets.core.routing.teachers import (
    SimilarityThresholds,
    TeacherTask,
    TextEncoder,
    calibrate_thresholds,
    similarity_scores,
)
from rag_assets.core.store.routing_tables import load_labelled_rows
from rag_assets.core.store.tree_tables import load_trees

SAMPLE_COLUMNS = tuple(RoutingSample.__dataclass_fields__)  # a stored sample's routing_subtrees columns


@dataclass(frozen=True, slots=True)
class RoutedSample:
    sample: RoutingSample
    decision: RouterDecision
    output: str


def route_samples(
    engine: LLMEngine,
    samples: Sequence[RoutingSample],
    trees: dict[str, Sequence[TreeNode]],
    *,
    adapter: str | None = None,
    max_new_tokens: int = 48,
    constrained: bool = True,
) -> list[RoutedSample]:
    """The router (base model, or `adapter`) on stored samples: ONE engine call, every output
    parsed against the view the sample was rendered from. `constrained`: decode under the view's
    action grammar, as the RDR2 pipeline does (engines without constrained decoding ignore it)."""
    if not samples:
        return []
    views = [restore(sample, trees[sample.doc_id])[1] for sample in samples]
    generations = engine.generate(
        [routing_messages(s.query, s.rendered) for s in samples],
        adapter=adapter,
        max_new_tokens=max_new_tokens,
        regex=[view_action_regex(v) for v in views] if constrained else None,
    )
    if len(generations) != len(samples):
        raise RuntimeError(f"engine returned {len(generations)} generations for {len(samples)} prompts")
    return [
        RoutedSample(sample, parse_router_output(generation.text, view), generation.text)
        for sample, view, generation in zip(samples, views, generations)
    ]


def score_routed(routed: Sequence[RoutedSample], golds: Sequence[RoutingGold]) -> RoutingScores:
    """ANS-F1, EXP-PRE, REF-ACC, expelled, collapsed and parse-failure rates of routed samples,
    the intervals resampling their questions (a question's views succeed or fail together)."""
    predictions = [
        RoutingPrediction(
            frozenset(r.decision.answer_ids),
            frozenset(r.decision.expand_ids),
            r.decision.refused,
            r.decision.expelled,
            r.decision.collapsed,
        )
        for r in routed
    ]
    return score_routing(predictions, golds, [r.sample.qid for r in routed])


def load_routing_samples(
    con: duckdb.DuckDBPyConnection, collection: str, *, fold: str | None = None, limit: int | None = None
) -> list[tuple[RoutingSample, RoutingGold]]:
    """Stored samples with their teacher label as gold (teacher failures excluded), by subtree id."""
    rows = load_labelled_rows(
        con, collection, SAMPLE_COLUMNS, ["answer_ids", "expand_ids"], fold=fold or None, limit=limit
    )
    return [(sample_from_row(row[:-2]), RoutingGold(frozenset(row[-2]), frozenset(row[-1]))) for row in rows]


@dataclass(frozen=True, slots=True)
class LabelledView:
    """A stored routing sample with its teacher label, ready for either router kind to train on."""

    qid: str
    query: str
    rendered: str  # the LLM router's input
    target: str  # the teacher's actions in the router grammar (the LLM router's target)
    example: RoutingExample  # the view and its gold actions (the encoder router's input)


def load_routing_examples(
    con: duckdb.DuckDBPyConnection, collection: str, *, fold: str, synthetic: bool = True
) -> list[LabelledView]:
    """The fold's labelled views (teacher failures excluded), by subtree id; `synthetic=False`
    leaves out the views of corpus-made questions."""
    rows = load_labelled_rows(con, collection, SAMPLE_COLUMNS, ["target", "answer_ids", "expand_ids"], fold=fold)
    samples = [(sample_from_row(row[:-3]), *row[-3:]) for row in rows]
    if not synthetic:
        samples = [r for r in samples if not r[0].qid.startswith(SYNTHETIC_QID_PREFIX)]
    trees = load_trees(con, collection, doc_ids=sorted({s.doc_id for s, *_ in samples})) if samples else {}
    out = []
    for sample, target, answer_ids, expand_ids in samples:
        state, view = restore(sample, trees[sample.doc_id][0])
        example = RoutingExample(sample.query, state, view, frozenset(answer_ids), frozenset(expand_ids))
        out.append(LabelledView(sample.qid, sample.query, sample.rendered, target, example))
    return out


def weight_real_views(views: Sequence[LabelledView], weight: int) -> list[LabelledView]:
    """`views` with each real (labelled) question's view repeated `weight` times and each synthetic
    one kept once, in their order.

    Why: the corpus-made questions (inverse cloze, headings) can outnumber the real ones several
    times over (six to one on nq_wiki), so they set what the encoder learns; repeating the real
    views weights the task the router is judged on. The contrastive batches shuffle and keep one
    query per batch, so a view's copies never serve as each other's in-batch negatives."""
    if weight < 1:
        raise ValueError(f"weight must be at least 1, got {weight}")
    return [v for v in views for _ in range(1 if v.qid.startswith(SYNTHETIC_QID_PREFIX) else weight)]


def calibrate_similarity(encoder: TextEncoder, examples: Sequence[RoutingExample]) -> SimilarityThresholds:
    """The similarity router's thresholds: the similarity teacher's calibration on labelled views."""
    tasks = [TeacherTask(e.query, e.state, e.view, "") for e in examples]
    return calibrate_thresholds(similarity_scores(encoder, tasks), list(examples)).thresholds


def route_samples_with(
    router: Router,
    samples: Sequence[RoutingSample],
    trees: dict[str, Sequence[TreeNode]],
    knobs: RoutingKnobs | None = None,
) -> list[RoutedSample]:
    """Any router kind on stored samples (one `route` call), each reply parsed against its view:
    the same measurement `route_samples` makes of the LLM. `knobs` name e.g. the LLM adapter."""
    if not samples:
        return []
    requests = []
    memos: dict[str, dict] = {}  # one per question: its views are routed together, as in rdr2
    for sample in samples:
        state, view = restore(sample, trees[sample.doc_id])
        memo = memos.setdefault(sample.qid, {})
        requests.append(RouteRequest(0, sample.query, state, view, (), final_round=False, question_memo=memo))
    replies = router.route(requests, knobs or RoutingKnobs())
    return [
        RoutedSample(sample, parse_router_output(reply.text, request.view), reply.text)
        for sample, request, reply in zip(samples, requests, replies)
    ]
