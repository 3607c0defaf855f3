"""`evidence_evaluation`: what each strategy would give the reader, on every evaluation question,
without the reader (core/evaluation/evidence.py): rag-hybrid against RDR2 with each router kind,
budget filled and on the router's own choices, with bootstrap intervals and paired differences.

Seconds per question, not a reader pass per row: so it covers all dev + test questions (not the
sample `answers` reads) and is the first table of `evaluation_report`."""

import time

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field, field_validator

from rag_assets.core.answering.policy.catalogue import (
    BUDGET_SOURCE,
    DEFAULT_SETTINGS,
    StrategySettings,
    settings_from,
    strategy_specs,
)
from rag_assets.core.answering.policy.routing_choice import routing_note
from rag_assets.core.answering.policy.sessions import document_steer
from rag_assets.core.answering.published import load_published
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.evaluation.evidence import (
    DEFAULT_KINDS,
    EVIDENCE_KINDS,
    LLM_KINDS,
    StoreScope,
    evidence_footnote,
    evidence_table,
    evidence_title,
    measure_evidence,
    own_documents,
    summarise_evidence,
)
from rag_assets.core.index.document_names import document_names
from rag_assets.core.lineage import utc_now
from rag_assets.core.store.evidence import store_evidence
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.tree_tables import load_trees
from rag_assets.defs.config_choices import only_known
from rag_assets.defs.deployment import CATALOGUE_POOL, GPU_STEP_TAGS, TRANSIENT_RETRY
from rag_assets.defs.metadata import markdown_table
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.routing.router_adapter import router_adapter
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
from resources.session_models import ResourceModels
from resources.vectors import VectorStoreResource


class EvidenceConfig(dg.Config):
    split: str = Field(
        default="dev,test",
        description="Evaluation questions (every one of them; the train split is what the routers learnt on).",
    )
    max_questions: int = Field(default=0, ge=0, description="Questions evaluated at most (0 = every question).")
    kinds: list[str] = Field(
        default=list(DEFAULT_KINDS),
        description="Router kinds measured. llm / llm-rank (the trained LLM adapter, generating or ranking its "
        "actions) make one LLM call per view: about a second per view on a CPU, so they are asked for by name.",
    )
    # rdr2's and rag-hybrid's settings, as `answers` runs them (same names, same defaults)
    rag_top_k: int = Field(default=DEFAULT_SETTINGS.rag_top_k, ge=1, le=100, description="Passages rag-hybrid gives.")
    top_k: int = Field(default=DEFAULT_SETTINGS.top_k, ge=1, le=50, description="Documents rdr2 routes.")
    passages_per_query: int = Field(default=DEFAULT_SETTINGS.passages_per_query, ge=1, le=200)
    expand_iterations: int = Field(default=DEFAULT_SETTINGS.expand_iterations, ge=0, le=10)
    learned_routing: bool = Field(
        default=DEFAULT_SETTINGS.learned_routing,
        description="rdr2 routes with the settings `answer_policy` learned for the collection on its train questions "
        "(first-stage passages, documents routed, expand threshold) where it published some, as every ask does; "
        "false: with top_k and passages_per_query as configured here.",
    )
    line_items: bool = Field(
        default=DEFAULT_SETTINGS.line_items,
        description="rdr2's evidence also holds, ahead of the router's choices, the statement rows whose labels name "
        "the line items the question names (a formula's terms, 'capital expenditure', the items of 'operating "
        "margin'), looked up in the routed documents; false: the router's choices alone.",
    )
    token_budget: int = Field(default=DEFAULT_SETTINGS.token_budget, ge=64, le=32768)
    router_max_new_tokens: int = Field(default=DEFAULT_SETTINGS.router_max_new_tokens, ge=8, le=512)
    single_store: list[str] = Field(
        default=[],
        description="Collections also measured on the single store: each question searched and routed within its "
        "own document (its gold_doc) only; those rows are named '... (single store)'.",
    )
    named_documents: list[str] = Field(
        default=[],
        description="Collections also measured with each question searched and routed within the documents whose "
        "file names it names (company, year, form: core/index/document_names.py; a question naming none is "
        "searched in the whole store); those rows are named '... (named documents)'.",
    )
    every_document: list[str] = Field(
        default=[],
        description="Collections also measured with each question searched and routed in every document, not only "
        "in those whose cards it names (the default steer, core/index/document_steer.py); those rows are named "
        "'... (all documents)'.",
    )

    def settings(self) -> StrategySettings:
        """The strategy settings with this step's rdr2 and rag-hybrid knobs (the rest as `answers`' defaults)."""
        return settings_from(self)

    @field_validator("kinds")
    @classmethod
    def known_kinds(cls, kinds: list[str]) -> list[str]:
        return only_known(kinds, EVIDENCE_KINDS, "evidence_evaluation kinds")


def measured_kinds(config: EvidenceConfig, session: AnsweringSession, backend: str, notes: list[str]) -> list[str]:
    """The configured router kinds that can be measured on what was published (a note for each not)."""
    kinds = list(dict.fromkeys(config.kinds))
    if "encoder" in kinds and "encoder" not in session.published.routers:
        notes.append("no trained encoder router: rdr2-encoder not measured")
        kinds.remove("encoder")
    if any(k in LLM_KINDS for k in kinds) and session.published.llm_adapter is None:
        notes.append("no trained LLM router adapter: the LLM kinds route with the base model")
    if "llm-rank" in kinds and not session.can_rank():
        notes.append(f"{backend} backend cannot score continuations: llm-rank not measured")
        kinds.remove("llm-rank")
    return kinds


def _measured(
    config: EvidenceConfig,
    session: AnsweringSession,
    questions: list,
    kinds: list[str],
    trees: dict,
    scope: StoreScope | None = None,
) -> list:
    """The evidence rows of rag-hybrid and rdr2 with each router kind (within `scope` when given)."""
    settings = config.settings()
    routing = settings.routing(session.published.routing_choice)
    specs = strategy_specs(settings, "short", session.published.llm_adapter, routing=routing)
    return measure_evidence(
        questions,
        baseline=specs[BUDGET_SOURCE],
        routed=specs["rdr2"],
        kinds=kinds,
        routers={kind: session.router(kind) for kind in kinds if kind != "llm"},
        # the scoped rows search where their scope says, unsteered; the main rows as a user's asks
        retrieve=session.retrieve if scope is None else session.unsteered_retrieve,
        trees=trees,
        engine=session.engine if any(k in LLM_KINDS for k in kinds) else None,
        scope=scope,
    )


def scopes(config: EvidenceConfig, collection: str, questions: list, doc_ids: list[str]) -> list[StoreScope]:
    """The other stores `collection` is also measured on: each question's own document (single
    store), the documents each question's file names name (named documents), every document."""
    found = []
    if collection in config.every_document:
        found.append(StoreScope.every_document())
    if collection in config.single_store:
        found.append(StoreScope.single_store(own_documents(questions, doc_ids)))
    if collection in config.named_documents:
        names = document_names(tuple(doc_ids))
        found.append(StoreScope.named({q.qid: names.named_in(q.query) for q in questions}))
    return found


@dg.asset(
    pool=CATALOGUE_POOL,
    retry_policy=TRANSIENT_RETRY,
    op_tags=GPU_STEP_TAGS,
    partitions_def=collection_partitions,
    deps=["passage_index", "questions", "document_cards", router_adapter],
    group_name="evaluation",
    kinds={"python", "duckdb"},
    description="Evidence without the reader on every evaluation question: rag-hybrid against RDR2 with each "
    "router kind (trained encoder, untrained similarity, hit-nodes floor, oracle ceiling), budget filled and on "
    "the router's own choices (and, for the collections named in single_store, within each question's own "
    "document); passage hit / evidence recall / section hit / page hit and words with 95% bootstrap "
    "intervals and paired differences against rag-hybrid. One row per strategy and question in "
    "`evidence_evaluation`, replaced per collection atomically.",
)
def evidence_evaluation(
    context: dg.AssetExecutionContext,
    config: EvidenceConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    started = time.perf_counter()
    collection = context.partition_key
    with catalogue.get_connection() as con:
        published = load_published(con, collection)  # the LanceDB version published with these passages
        questions = load_question_rows(con, collection, config.split)
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
        steer = document_steer(con, [collection])  # as a user's asks: within the documents the cards name
    if config.max_questions:
        questions = questions[: config.max_questions]
    if not questions:
        context.log.warning(f"collection {collection!r} has no {config.split!r} questions: nothing to evaluate")
        with catalogue.get_connection() as con:
            store_evidence(con, collection, [], run_id=context.run.run_id, created_at=utc_now())
        return dg.MaterializeResult(metadata={"dagster/row_count": 0, "questions": 0, "split": config.split})
    session = AnsweringSession(published, ResourceModels(embedder, vectors, llm), trees, gold=questions, steer=steer)
    settings = config.settings()
    notes = list(published.router_notes)
    kinds = measured_kinds(config, session, llm.backend, notes)
    for note in notes:
        context.log.warning(note)
    rows = _measured(config, session, questions, kinds, trees)
    for scope in scopes(config, collection, questions, list(trees)):
        rows += _measured(config, session, questions, kinds, trees, scope)
    with catalogue.get_connection() as con:
        store_evidence(con, collection, rows, run_id=context.run.run_id, created_at=utc_now())
    summary = summarise_evidence(rows, BUDGET_SOURCE)
    header, body = evidence_table(summary)
    split = "+".join(sorted({q.split for q in questions}))
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(rows),
            "questions": len(questions),
            "split": split,
            "kinds": ", ".join(kinds),
            "rdr2_routing": routing_note(
                strategy_specs(settings, "short", None, routing=settings.routing(published.routing_choice))["rdr2"],
                settings.routing(published.routing_choice),
            ),
            "evidence": dg.MetadataValue.md(
                f"**{evidence_title(summary, split)}**\n\n{markdown_table(header, body)}\n\n{evidence_footnote(summary)}"
            ),
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
            "seconds": round(time.perf_counter() - started, 1),
            "seconds_per_question": round((time.perf_counter() - started) / len(questions), 3),
        }
    )
