"""Routing data: Retrieval SubTrees for training questions, labelled by a teacher.

For each training question the top documents are retrieved, each document's subtree is rendered
as the router would see it (the *initial* view), and expansion views are added (a collapsed
heading unfolded) so EXPAND and post-expansion decisions are represented too. Identical
(question, rendering) pairs are kept once.

`curate` labels the samples with the configured teacher (`oracle`, `llm`, `similarity`, or `mix`:
the oracle for questions with gold labels, the similarity teacher for the others), and
`route_samples` runs the router over stored samples for the router metrics.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb

from rag_assets.core.catalogue import ensure_schema, load_trees
from rag_assets.core.encoder_training import RoutingExample
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.questions import Question, stable_split
from rag_assets.core.retrieval import SearchHit
from rag_assets.core.router_io import RouterDecision, parse_router_output, routing_messages, view_action_regex
from rag_assets.core.router_metrics import RoutingGold, RoutingPrediction, RoutingScores, score_routing
from rag_assets.core.routing import Router, RouteRequest, RoutingKnobs
from rag_assets.core.subtree import DocumentRouting, SubtreeView, word_count
from rag_assets.core.teachers import (
    Calibration,
    SimilarityThresholds,
    TeacherLabel,
    TeacherTask,
    TextEncoder,
    calibrate_thresholds,
    llm_teacher,
    oracle_teacher,
    similarity_label,
    similarity_scores,
)
from rag_assets.core.tree import TreeNode

TEACHERS = ("oracle", "llm", "similarity", "mix")
SYNTHETIC_QID_PREFIX = "synthetic:"  # qids of the corpus-made questions (core/synthetic_questions.py)


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


def oracle_label(doc: DocumentRouting, view: SubtreeView, question: Question) -> TeacherLabel:
    return oracle_teacher(
        doc, view, answers=question.answers, evidences=question.evidences, section_path=question.section_path
    )


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


def has_gold(question: Question) -> bool:
    """The oracle can label this question: gold answers, evidence or a section path, or it is
    known to be unanswerable (then refusing every document is the right label)."""
    return bool(question.answers or question.evidences or question.section_path or question.not_answerable)


@dataclass(slots=True)
class Curation:
    labels: list[TeacherLabel]  # aligned with the samples
    calibration: Calibration | None = None  # the similarity thresholds used, when that teacher ran


def curate(
    samples: Sequence[RoutingSample],
    questions: dict[str, Question],
    trees: dict[str, Sequence[TreeNode]],
    teacher: str,
    *,
    encoder: TextEncoder | None = None,
    engine: LLMEngine | None = None,
    thresholds: SimilarityThresholds | None = None,
    calibrate_on: set[str] | frozenset[str] = frozenset(),
    llm_max_new_tokens: int = 128,
) -> Curation:
    """Label every sample with `teacher`.

    oracle: gold answers / evidence / section path. llm: `engine`, one batched call for all
    samples. similarity: `encoder`, with `thresholds` if given, else thresholds calibrated against
    the oracle labels of the samples in `calibrate_on` whose question has gold (the defaults when
    none has). mix: the oracle where the question has gold (`has_gold`), else similarity.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"teacher {teacher!r} is not one of {TEACHERS}")
    missing = sorted({s.doc_id for s in samples} - trees.keys())
    if missing:
        raise KeyError(f"no tree for documents {missing[:5]} (routing_subtrees is newer than document_trees?)")
    unknown = sorted({s.qid for s in samples} - questions.keys())
    if unknown:
        raise KeyError(f"no question for qids {unknown[:5]} (routing_subtrees is newer than questions?)")
    tasks = []
    for sample in samples:
        doc, view = restore(sample, trees[sample.doc_id])
        tasks.append(TeacherTask(sample.query, doc, view, sample.rendered))

    def oracle(i: int) -> TeacherLabel:
        return oracle_label(tasks[i].doc, tasks[i].view, questions[samples[i].qid])

    if teacher == "oracle":
        return Curation([oracle(i) for i in range(len(tasks))])
    if teacher == "llm":
        if engine is None:
            raise ValueError("the llm teacher needs an engine")
        return Curation(llm_teacher(engine, tasks, max_new_tokens=llm_max_new_tokens))
    if encoder is None:
        raise ValueError(f"the {teacher} teacher needs an encoder (the embedder)")
    use_similarity = [teacher == "similarity" or not has_gold(questions[s.qid]) for s in samples]
    labels: list[TeacherLabel | None] = [None if sim else oracle(i) for i, sim in enumerate(use_similarity)]
    wanted = [i for i, sim in enumerate(use_similarity) if sim]
    calibration = None
    if wanted:
        labelled = (
            []
            if thresholds is not None
            else [i for i, s in enumerate(samples) if s.subtree_id in calibrate_on and has_gold(questions[s.qid])]
        )
        scoring = sorted({*wanted, *labelled})  # each view embedded once, for calibration and labelling
        scores = dict(zip(scoring, similarity_scores(encoder, [tasks[i] for i in scoring])))
        if thresholds is None:
            calibration = calibrate_thresholds(
                [scores[i] for i in labelled], [labels[i] or oracle(i) for i in labelled]
            )
        else:
            calibration = Calibration(thresholds, 0, None, None)
        for i in wanted:
            labels[i] = similarity_label(tasks[i].doc, scores[i], calibration.thresholds)
    return Curation([label for label in labels if label is not None], calibration)


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
    """ANS-F1, EXP-PRE, REF-ACC, expelled, collapsed and parse-failure rates of routed samples."""
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
    return score_routing(predictions, golds)


@dataclass(frozen=True, slots=True)
class AdapterRecord:
    collection: str
    adapter_id: str
    path: str
    base_model: str
    created_at: datetime


def record_adapter(
    con: duckdb.DuckDBPyConnection, collection: str, adapter_id: str, path: str, base_model: str
) -> AdapterRecord:
    """Append a trained adapter to the `router_adapters` history (newest row = the current one)."""
    ensure_schema(con, ["router_adapters"])
    created = datetime.now(UTC).replace(tzinfo=None)
    con.execute(
        "INSERT INTO router_adapters VALUES (?, ?, ?, ?, ?)", [collection, adapter_id, path, base_model, created]
    )
    return AdapterRecord(collection, adapter_id, path, base_model, created)


def latest_adapter(con: duckdb.DuckDBPyConnection, collection: str) -> AdapterRecord | None:
    """The newest adapter recorded for `collection`, or None (never trained)."""
    ensure_schema(con, ["router_adapters"])
    row = con.execute(
        "SELECT collection, adapter_id, path, base_model, created_at FROM router_adapters "
        "WHERE collection = ? ORDER BY created_at DESC, adapter_id LIMIT 1",
        [collection],
    ).fetchone()
    return AdapterRecord(*row) if row else None


def load_routing_samples(
    con: duckdb.DuckDBPyConnection, collection: str, *, fold: str | None = None, limit: int | None = None
) -> list[tuple[RoutingSample, RoutingGold]]:
    """Stored samples with their teacher label as gold (teacher failures excluded), by subtree id."""
    clauses, params = ["a.collection = ?", "a.kind <> 'failed'"], [collection]
    if fold:
        clauses.append("a.fold = ?")
        params.append(fold)
    sql = (
        f"SELECT {', '.join('s.' + f for f in RoutingSample.__dataclass_fields__)}, a.answer_ids, a.expand_ids "
        "FROM routing_actions a JOIN routing_subtrees s USING (collection, subtree_id) "
        f"WHERE {' AND '.join(clauses)} ORDER BY s.subtree_id"
    )
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [
        (sample_from_row(row[:-2]), RoutingGold(frozenset(row[-2]), frozenset(row[-1])))
        for row in con.execute(sql, params).fetchall()
    ]


def sample_from_row(row: Sequence) -> RoutingSample:
    """A RoutingSample from a `routing_subtrees` row (its fields in order; id lists as tuples)."""
    return RoutingSample(*(tuple(v) if isinstance(v, list) else v for v in row))


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
    fields = ", ".join("s." + f for f in RoutingSample.__dataclass_fields__)
    rows = con.execute(
        f"SELECT {fields}, a.target, a.answer_ids, a.expand_ids FROM routing_actions a "
        "JOIN routing_subtrees s USING (collection, subtree_id) "
        "WHERE a.collection = ? AND a.fold = ? AND a.kind <> 'failed' ORDER BY s.subtree_id",
        [collection, fold],
    ).fetchall()
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


def calibrate_similarity(encoder: TextEncoder, examples: Sequence[RoutingExample]) -> SimilarityThresholds:
    """The similarity router's thresholds: the similarity teacher's calibration on labelled views."""
    tasks = [TeacherTask(e.query, e.state, e.view, "") for e in examples]
    return calibrate_thresholds(similarity_scores(encoder, tasks), list(examples)).thresholds


def route_samples_with(
    router: Router, samples: Sequence[RoutingSample], trees: dict[str, Sequence[TreeNode]]
) -> list[RoutedSample]:
    """Any router kind on stored samples (one `route` call), each reply parsed against its view:
    the same measurement `route_samples` makes of the LLM."""
    if not samples:
        return []
    requests = []
    for sample in samples:
        state, view = restore(sample, trees[sample.doc_id])
        requests.append(RouteRequest(0, sample.query, state, view, (), final_round=False))
    replies = router.route(requests, RoutingKnobs())
    return [
        RoutedSample(sample, parse_router_output(reply.text, request.view), reply.text)
        for sample, request, reply in zip(samples, requests, replies)
    ]


def adapter_record(con: duckdb.DuckDBPyConnection, collection: str, adapter_id: str) -> AdapterRecord | None:
    """The `router_adapters` row of one published router, or None."""
    ensure_schema(con, ["router_adapters"])
    row = con.execute(
        "SELECT collection, adapter_id, path, base_model, created_at FROM router_adapters "
        "WHERE collection = ? AND adapter_id = ? ORDER BY created_at DESC LIMIT 1",
        [collection, adapter_id],
    ).fetchone()
    return AdapterRecord(*row) if row else None
