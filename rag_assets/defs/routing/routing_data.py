"""`synthetic_questions`, `routing_subtrees` and `routing_actions`: the router's training data,
curated by a teacher from the collection's labelled train questions and from questions made from
the corpus itself."""

from collections import Counter
from collections.abc import Callable, Sequence
from enum import StrEnum

import dagster as dg
import pyarrow as pa
from dagster_duckdb import DuckDBResource
from pydantic import Field

from rag_assets.core.answering.policy.sessions import document_steer
from rag_assets.core.corpus.synthetic_questions import DEFAULT_SYNTHETIC_KINDS
from rag_assets.core.corpus.synthetic_questions import synthetic_questions as make_synthetic_questions
from rag_assets.core.index.document_steer import DocumentSteer
from rag_assets.core.index.retrieval import search
from rag_assets.core.routing.curation import curate
from rag_assets.core.routing.evaluation_views import ViewKnobs
from rag_assets.core.routing.samples import (
    SYNTHETIC_QID_PREFIX,
    RoutingSample,
    build_routing_samples,
    routing_fold,
    sample_from_row,
)
from rag_assets.core.routing.teachers import FAILED, KINDS, Calibration, SimilarityThresholds, TeacherLabel
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.question_table import load_question_rows, questions_table
from rag_assets.core.store.routing_tables import load_subtree_rows, view_settings_table
from rag_assets.core.store.schemas import ROUTING_ACTIONS_ARROW_SCHEMA
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.corpus.questions import questions as questions_asset
from rag_assets.defs.deployment import CATALOGUE_POOL, TRANSIENT_RETRY
from rag_assets.defs.index.passage_index import passage_index
from rag_assets.defs.metadata import counter_table, fenced, markdown_table, row_count_metadata, table_metadata
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.structure.document_trees import document_trees
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource, LLMResource
from resources.vectors import VectorStoreResource


class SyntheticKind(StrEnum):
    """How a synthetic question is made (launchpad choices)."""

    cloze = "cloze"
    heading = "heading"
    row = "row"


class Teacher(StrEnum):
    """Who labels the routing views (launchpad choices)."""

    oracle = "oracle"
    llm = "llm"
    similarity = "similarity"
    mix = "mix"


class SyntheticQuestionsConfig(dg.Config):
    count: int = Field(
        default=120,
        ge=0,
        le=100_000,
        description="Synthetic training questions made from the corpus per collection (0 = none); "
        "each costs one retrieval and a few routing views downstream.",
    )
    kinds: list[SyntheticKind] = Field(
        default=list(DEFAULT_SYNTHETIC_KINDS),
        min_length=1,
        description="`cloze` (a sentence of a paragraph is the query, the paragraph its gold), "
        "`heading` (a section heading is the query, the section its gold path) and/or `row` (a "
        "table row's label and column header ask for its figure in the named document; the row "
        "its gold).",
    )


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    deps=[document_trees],
    group_name="structure",
    kinds={"python", "duckdb"},
    metadata=table_metadata("synthetic_questions"),
    description="Training questions made from the collection's own trees (inverse-cloze sentences and section "
    "headings, with their gold node or section), so the router learns on collections without a labelled "
    "question set; never evaluated on.",
)
def synthetic_questions(
    context: dg.AssetExecutionContext, config: SyntheticQuestionsConfig, catalogue: DuckDBResource
) -> dg.MaterializeResult:
    collection = context.partition_key
    try:
        with catalogue.get_connection() as con:
            trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
        made = make_synthetic_questions(trees, config.count, kinds=[str(k) for k in config.kinds], seed=collection)
    except ValueError as error:
        raise dg.Failure(f"synthetic_questions config: {error}") from None
    with catalogue.get_connection() as con:
        replace_collection(con, collection, {"synthetic_questions": questions_table(collection, made)})
        row_counts = row_count_metadata(con, "synthetic_questions", collection)
    kinds = Counter(q.extra.get("kind", "?") for q in made)
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "documents": len(trees),
            "by_kind": dg.MetadataValue.md(counter_table("kind", kinds)),
            "sample": dg.MetadataValue.md(
                markdown_table(
                    ["kind", "query", "gold"],
                    [
                        (q.extra.get("kind"), q.query[:100], " > ".join(q.section_path) or q.evidences[0][:60])
                        for q in made[:: max(len(made) // 6, 1)][:6]
                    ],
                )
            ),
        }
    )


class RoutingDataConfig(dg.Config):
    split: str = Field(
        default="train",
        pattern=r"^\s*[A-Za-z0-9_-]+\s*(,\s*[A-Za-z0-9_-]+\s*)*$",
        description="Labelled questions the router learns from (one split, or several joined by commas).",
    )
    synthetic: bool = Field(
        default=True, description="Also build training views for the `synthetic_questions` of the collection."
    )
    top_docs: int = Field(default=3, ge=1, le=50, description="Retrieved documents per question made into views.")
    passages_per_query: int = Field(
        default=10, ge=1, le=500, description="First-stage passages retrieved per question, grouped into documents."
    )
    expansion_views: int = Field(
        default=1, ge=0, le=10, description="Expansion views (a heading unfolded) added per retrieved document."
    )
    # A 512-token view plus the prompt fits the training `max_length` whole, and keeps CPU steps cheap.
    token_budget: int = Field(
        default=512,
        ge=64,
        le=32768,
        description="Router input per subtree, in base-model tokens (as `answers.token_budget` at inference).",
    )
    named_documents: list[str] = Field(
        default=[],
        description="Collections whose training questions no document card matches are searched within the "
        "documents they name by file name (company, year, form), as `rag ask --by-name` searches them. Every "
        "question is first searched within the documents whose cards it names (as every ask is).",
    )


def training_retriever(
    config: RoutingDataConfig, collection: str, index, model, steer: DocumentSteer | None
) -> Callable[[str], list]:
    """The first-stage search the training views are built from: within the documents `steer`
    chooses for each question (those whose cards it names; with `named_documents`, else those its
    file names name; else the whole collection), as a user's asks are searched, so the router learns
    on the views it is asked about (the question's filings, not the near-alike others)."""

    def retrieve(query: str) -> list:
        documents = steer.documents_for(query) if steer is not None else None  # None: the whole collection
        return search(index, model, query, k=config.passages_per_query, collections=[collection], documents=documents)

    return retrieve


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    deps=[passage_index, questions_asset, synthetic_questions, "document_cards"],
    group_name="routing",
    kinds={"python", "duckdb"},
    metadata=table_metadata("routing_subtrees"),
    description="Retrieval SubTrees of the training questions' top documents, as the router sees "
    "them, plus expansion views; identical (question, rendering) pairs kept once.",
)
def routing_subtrees(
    context: dg.AssetExecutionContext,
    config: RoutingDataConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    base_model: BaseModelResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    model = embedder.get()
    index = vectors.index(model)
    with catalogue.get_connection() as con:
        questions = load_question_rows(con, collection, config.split)
        labelled = len(questions)
        if config.synthetic:
            questions += load_question_rows(con, collection, table="synthetic_questions")
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
        steer = document_steer(con, [collection], "cards+names" if collection in config.named_documents else "cards")
    # the searches and token counts hold no connection: readers (`rag serve`) are not locked out
    samples = build_routing_samples(
        questions,
        training_retriever(config, collection, index, model, steer),
        trees,
        top_docs=config.top_docs,
        expansion_views=config.expansion_views,
        token_budget=config.token_budget,
        count_tokens=base_model.token_counter(),
    )
    table = pa.table(
        {
            "collection": [collection] * len(samples),
            **{f: [getattr(s, f) for s in samples] for f in RoutingSample.__dataclass_fields__},
        }
    )
    with catalogue.get_connection() as con:  # held for the write only
        settings = view_settings_table(
            collection, config.split, {knob: getattr(config, knob) for knob in ViewKnobs.__dataclass_fields__}
        )
        replace_collection(con, collection, {"routing_subtrees": table, "routing_view_settings": settings})
        row_counts = row_count_metadata(con, "routing_subtrees", collection)
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "questions": len(questions),
            "questions_labelled": labelled,
            "questions_synthetic": len(questions) - labelled,
            # how the views were built (also in `routing_view_settings`, which router_metrics reads)
            "split": config.split,
            "named_documents": collection in config.named_documents,
            **{knob: getattr(config, knob) for knob in ViewKnobs.__dataclass_fields__},
            "views": dg.MetadataValue.md(counter_table("view", Counter(s.view.split(":")[0] for s in samples))),
            "sample": dg.MetadataValue.md(
                f"**{samples[0].query}**\n\n" + fenced(samples[0].rendered) if samples else "none"
            ),
        }
    )


class TeacherConfig(dg.Config):
    teacher: Teacher = Field(
        default="oracle",
        description="`oracle`: labels from the gold answers/evidence; `llm`: the LLM engine with the curation "
        "prompt; `similarity`: question-node cosine from the embedder; `mix`: oracle where gold exists, else "
        "similarity.",
    )
    validation_fraction: float = Field(
        default=0.2, ge=0.0, lt=1.0, description="Share of questions held out (by question id) to score the router."
    )
    llm_max_new_tokens: int = Field(default=128, ge=16, le=4096, description="The llm teacher's JSON answer length.")
    similarity_answer_threshold: float = Field(
        default=-1.0,
        ge=-1.0,
        le=1.0,
        description="Cosine above which the similarity teacher answers with a node; -1 = calibrate (with the "
        "expand threshold) on the train fold's oracle labels.",
    )
    similarity_expand_threshold: float = Field(
        default=-1.0,
        ge=-1.0,
        le=1.0,
        description="Cosine above which the similarity teacher expands a heading; -1 = calibrate.",
    )


def _table3(rows: list[dict]) -> str:
    """ANS/EXP/REF counts per fold, as the paper's Table 3 (plus teacher failures)."""
    counts = Counter((r["fold"], r["kind"]) for r in rows)
    table = [
        (fold, *(counts[(fold, k)] for k in (*KINDS, FAILED)), sum(counts[(fold, k)] for k in (*KINDS, FAILED)))
        for fold in ("train", "validation")
    ]
    table.append(("all", *(sum(row[i] for row in table) for i in range(1, 6))))
    return markdown_table(["fold", "ANS", "EXP", "REF", "failed", "total"], table)


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    partitions_def=collection_partitions,
    deps=[routing_subtrees],
    group_name="routing",
    kinds={"python", "duckdb"},
    metadata=table_metadata("routing_actions"),
    description="Teacher labels for every routing subtree, in the router's output grammar "
    "(teacher: oracle | llm | similarity | mix); train/validation split by question; "
    "failed teacher outputs kept for audit, never trained on.",
)
def routing_actions(
    context: dg.AssetExecutionContext,
    config: TeacherConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    collection = context.partition_key
    with catalogue.get_connection() as con:
        samples = [
            sample_from_row(row)
            for row in load_subtree_rows(con, collection, tuple(RoutingSample.__dataclass_fields__))
        ]
        questions = {q.qid: q for q in load_question_rows(con, collection)}
        questions.update({q.qid: q for q in load_question_rows(con, collection, table="synthetic_questions")})
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
    folds = _routing_folds(samples, config.validation_fraction)
    thresholds = _given_thresholds(config)
    needs_encoder = config.teacher in ("similarity", "mix")
    curation = curate(
        samples,
        questions,
        trees,
        str(config.teacher),
        encoder=embedder.get() if needs_encoder else None,
        engine=llm.engine() if config.teacher == "llm" else None,
        thresholds=thresholds,
        calibrate_on={sid for sid, fold in folds.items() if fold == "train"},
        llm_max_new_tokens=config.llm_max_new_tokens,
    )
    rows = _action_rows(collection, samples, folds, curation.labels)
    with catalogue.get_connection() as con:
        replace_collection(con, collection, {"routing_actions": _actions_table(rows)})
        row_counts = row_count_metadata(con, "routing_actions", collection)
    metadata = _actions_metadata(context, collection, rows, curation.labels, row_counts)
    metadata["teacher"] = str(config.teacher)
    if config.teacher == "llm":
        metadata["teacher_model"] = llm.engine().model_id
    if curation.calibration is not None:
        metadata.update(_calibration_metadata(curation.calibration, given=thresholds is not None))
    return dg.MaterializeResult(metadata=metadata)


def _routing_folds(samples: list[RoutingSample], validation_fraction: float) -> dict[str, str]:
    """The fold of each subtree: synthetic questions always train, so thresholds are calibrated
    (validation fold) on real questions; a collection with only synthetic ones splits those instead."""
    only_synthetic = all(s.qid.startswith(SYNTHETIC_QID_PREFIX) for s in samples)
    return {
        s.subtree_id: "train"
        if s.qid.startswith(SYNTHETIC_QID_PREFIX) and not only_synthetic
        else routing_fold(s.qid, validation_fraction)
        for s in samples
    }


def _given_thresholds(config: TeacherConfig) -> SimilarityThresholds | None:
    """The similarity thresholds the config sets (both), None to calibrate them (neither)."""
    if config.similarity_answer_threshold >= 0 and config.similarity_expand_threshold >= 0:
        return SimilarityThresholds(config.similarity_answer_threshold, config.similarity_expand_threshold)
    if config.similarity_answer_threshold >= 0 or config.similarity_expand_threshold >= 0:
        raise dg.Failure("set both similarity thresholds, or neither (to calibrate them)")
    return None


def _action_rows(
    collection: str, samples: list[RoutingSample], folds: dict[str, str], labels: Sequence[TeacherLabel]
) -> list[dict]:
    """One `routing_actions` row per subtree and its teacher label."""
    return [
        {
            "collection": collection,
            "subtree_id": s.subtree_id,
            "qid": s.qid,
            "fold": folds[s.subtree_id],
            "teacher": label.teacher,
            "target": label.target,
            "answer_ids": list(label.answer_ids),
            "expand_ids": list(label.expand_ids),
            "kind": label.kind,
            "raw": label.raw,
        }
        for s, label in zip(samples, labels)
    ]


def _actions_table(rows: list[dict]) -> pa.Table:
    """The rows as the `routing_actions` Arrow table."""
    return pa.table(
        {name: [r[name] for r in rows] for name in ROUTING_ACTIONS_ARROW_SCHEMA.names},
        schema=ROUTING_ACTIONS_ARROW_SCHEMA,
    )


def _actions_metadata(
    context: dg.AssetExecutionContext,
    collection: str,
    rows: list[dict],
    labels: Sequence[TeacherLabel],
    row_counts: dict[str, object],
) -> dict[str, object]:
    """Counts of the labels (warning about failed teacher outputs), as `routing_actions` metadata."""
    kinds = Counter(r["kind"] for r in rows)
    failed = kinds[FAILED]
    if failed:
        context.log.warning(
            f"{collection}: {failed}/{len(rows)} teacher outputs unusable; kept with kind "
            "'failed', excluded from training and metrics"
        )
    return {
        **row_counts,
        "ANS": kinds["answer"],
        "EXP": kinds["expand"],
        "REF": kinds["refuse"],
        "failed": failed,
        "teacher_parse_failure_rate": round(failed / len(rows), 4) if rows else 0.0,
        "invalid_ids_dropped": sum(label.invalid_ids for label in labels),
        "actions": dg.MetadataValue.md(_table3(rows)),
        "teachers_used": dg.MetadataValue.md(counter_table("teacher", Counter(r["teacher"] for r in rows))),
        "folds": dg.MetadataValue.md(counter_table("fold", Counter(r["fold"] for r in rows))),
        "views_by_source": dg.MetadataValue.md(
            counter_table(
                "fold / source",
                Counter(
                    f"{r['fold']} / {'synthetic' if r['qid'].startswith(SYNTHETIC_QID_PREFIX) else 'labelled'}"
                    for r in rows
                ),
            )
        ),
    }


def _calibration_source(f1: float | None, labelled: int, *, given: bool) -> str:
    """Where a similarity threshold came from: given, the default, or the calibration grid."""
    return "given" if given else "default" if f1 is None else f"grid, {labelled} views"


def _calibration_metadata(cal: Calibration, *, given: bool) -> dict[str, object]:
    """The similarity thresholds used and how they were chosen."""
    return {
        "similarity_answer_threshold": cal.thresholds.answer,
        "similarity_expand_threshold": cal.thresholds.expand,
        "similarity_calibration": dg.MetadataValue.md(
            markdown_table(
                ["action", "threshold", "F1 on labelled train views", "source"],
                [
                    (
                        "ANSWER",
                        cal.thresholds.answer,
                        "-" if cal.answer_f1 is None else round(cal.answer_f1, 3),
                        _calibration_source(cal.answer_f1, cal.labelled, given=given),
                    ),
                    (
                        "EXPAND",
                        cal.thresholds.expand,
                        "-" if cal.expand_f1 is None else round(cal.expand_f1, 3),
                        _calibration_source(cal.expand_f1, cal.labelled, given=given),
                    ),
                ],
            )
        ),
    }
