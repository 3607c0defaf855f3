"""`rag ask` and the service's ask: one question answered through the answering session of its
collection (core/answering/session.py), exactly as the `answers` asset answers it, then stored with
its lineage in one short write. Imported only when something is asked (it loads the models' code)."""

from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag_assets.core.answering.extractive import EXTRACTIVE_NOTE, READER_EMPTY_NOTE
from rag_assets.core.answering.figure_answers import FIGURE, FIGURE_NOTE
from rag_assets.core.answering.measure_verdicts import MEASURE_VERDICT_NOTE
from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.core.answering.policy.asks import plan_ask
from rag_assets.core.answering.policy.budgets import evidence_budgets
from rag_assets.core.answering.policy.catalogue import canonical_strategy
from rag_assets.core.answering.policy.options import AskOptions, Note
from rag_assets.core.answering.policy.sessions import open_session
from rag_assets.core.answering.session import AnsweringSession, SessionModels
from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
from rag_assets.core.answering.verdict import VERDICT_NOTE
from rag_assets.core.errors import ConfigError
from rag_assets.core.lineage import AnswerRecord, store_answers
from rag_assets.core.store.connections import ShortReads, catalogue_connection
from rag_assets.core.store.document_tables import documents_named
from rag_assets.core.store.publication import IndexPin
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.transactions import table_exists
from rag_assets.core.store.tree_tables import CatalogueTrees
from rag_assets.events.served_answers import enqueue_answers
from rag_assets.serving.catalogue_reads import catalogue_path, check_collections, read_catalogue
from rag_assets.serving.streaming import StreamingReader


class AskingService(Protocol):
    """What an ask needs of the query service (rag_assets/serving/query.py `QueryService`)."""

    models: SessionModels
    on_wait: Note | None

    def routed_collections(self, query: str) -> list[str]: ...


@dataclass
class AskResult:
    record: AnswerRecord  # as stored
    outcome: AnswerOutcome  # citations with heading paths
    published: IndexPin | None  # the index version read (None: the strategy read none)
    answer_style: str
    notes: list[str] = field(default_factory=list)
    floor: RelevanceFloor | None = None  # the relevance floor the answer was held to

    def to_dict(self) -> dict[str, Any]:
        """The stored answer; its citations, those it rests on first (`supports`), then the
        evidence also given."""
        supporting = self.outcome.supporting
        return {
            "answer": self.record.to_dict(),
            "citations": [
                {
                    "n": i,
                    "doc_id": c.doc_id,
                    "node_id": c.node_id,
                    "heading_path": list(c.heading_path),
                    "span": [c.span_start, c.span_end],
                    "pages": c.pages,
                    "text": c.text,
                    "supports": supporting < 0 or i <= supporting,
                }
                for i, c in enumerate(self.outcome.citations, start=1)
            ],
            "supporting": supporting,
            "answer_form": self.outcome.answer_form,
            "form_note": form_note(self.outcome, self.floor),
            "published": self.published.to_dict() if self.published else None,
            "answer_style": self.answer_style,
            "notes": self.notes,
        }


@dataclass(frozen=True, slots=True)
class Asked:
    """What one question is answered with: its collection's session and the spec it runs."""

    session: AnsweringSession
    spec: StrategySpec


class Ask:
    """One ask of `service`: the notes it makes reach `on_note` as they are made."""

    def __init__(self, service: AskingService, on_note: Note | None = None) -> None:
        self.service = service
        self.on_note = on_note
        self.notes: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)
        if self.on_note:
            self.on_note(text)

    def answer(
        self,
        question: str,
        collection: str | None,
        strategy: str,
        options: AskOptions,
        source: str,
        on_text: Note | None,
    ) -> AskResult:
        if not question.strip():
            raise ConfigError("the question is empty: ask something")
        name = canonical_strategy(strategy)
        routed: list[str] | None = None
        if collection == "all":  # the answer is stored under the best routed collection
            routed = self.service.routed_collections(question)
            collection = routed[0]
        asked = self.session(name, collection, routed, options, question)
        outcome = self.outcome(question, asked, on_text)
        record = self.store(asked, outcome, source)
        read = asked.session.published.index if asked.spec.kind != "none" else None
        floor = asked.session.relevance_floor()
        return AskResult(record, outcome, read, asked.spec.answer_style, self.notes, floor)

    def session(
        self, name: str, collection: str | None, routed: list[str] | None, options: AskOptions, question: str
    ) -> Asked:
        """The answering session of the asked collection and the spec it runs (fallbacks noted)."""
        with read_catalogue(self.service.on_wait) as con:
            known = check_collections(con, [collection] if collection else None)
            if len(known) != 1:
                raise ConfigError(f"say which collection with --collection (the catalogue holds {', '.join(known)})")
            questions = load_question_rows(con, known[0]) if table_exists(con, "questions") else []
            documents = named_documents(con, known, options.document)
            # trees are read as the routing needs them, each read on its own short connection
            reads = ShortReads(catalogue_path(), on_wait=self.service.on_wait)
            trees = ChainMap(*(CatalogueTrees(reads, c) for c in routed or [known[0]]))
            session = open_session(
                con,
                known[0],
                self.service.models,
                trees=trees,
                search_in=routed,
                documents=documents,
                steer=options.steer(),
            )
        if session.steer is not None and documents is None:
            self.note(session.steer.note(question))
        spec = plan_ask(name, session.published, questions, options, self.note)
        missing = session.missing_piece(spec)
        if missing:
            raise ConfigError(f"{missing} for {session.collection!r}: {spec.name} cannot run (materialize it first)")
        return Asked(session, spec)

    def outcome(self, question: str, asked: Asked, on_text: Note | None) -> AnswerOutcome:
        """One answer through the session, budgeted as evaluated, streamed to `on_text`."""
        session, spec = asked.session, asked.spec
        engine = session.engine  # first: a misconfigured backend fails fast
        reader = StreamingReader(engine, on_text) if on_text is not None else None
        if spec.kind != "none":  # `none` reads no evidence: no embedder, no index
            self.note(session.published.index.note)
        # as evaluated: rdr2 reads at most the words rag-hybrid read
        budgets = evidence_budgets(session, [question], spec)
        outcome = session.run([question], spec, evidence_budgets=budgets, reader=reader)[0]
        if reader is not None:  # what was streamed and what is stored are one string
            reader.finish(outcome.answer)
        return outcome

    def store(self, asked: Asked, outcome: AnswerOutcome, source: str) -> AnswerRecord:
        """The answer with its lineage, stored in one short write."""
        with read_catalogue(self.service.on_wait) as con:
            record = asked.session.record(con, outcome, asked.spec, source=source)
        # the only write: one short transaction, waiting (bounded, visibly) for a writer's own
        with catalogue_connection(catalogue_path(), read_only=False, on_wait=self.service.on_wait) as con:
            store_answers(con, [record])
        enqueue_answers([record])  # its Dagster event, written in a batch (events/served_answers.py)
        return record


def named_documents(con: Any, collections: list[str], name: str | None) -> list[str] | None:
    """The doc ids `name` names (`--document`), None without a name; ConfigError when it names none."""
    if not name:
        return None
    found = documents_named(con, collections, name)
    if not found:
        raise ConfigError(f"no document {name!r} in {', '.join(collections)} (give a doc id, file name or title)")
    return found


def form_note(outcome: AnswerOutcome, floor: RelevanceFloor | None = None) -> str:
    """What form the answer is in, in the words a person reads beside it."""
    if outcome.not_found and outcome.not_found_note:  # its words are unknown to the documents
        return outcome.not_found_note
    if outcome.not_found and floor is not None:
        return floor.note(outcome.relevance)
    if outcome.reader_empty:
        return READER_EMPTY_NOTE
    if outcome.answer_form != "extractive":
        return "generated: written by the reader from the evidence"
    if outcome.attribution == FIGURE:  # a figure, or the yes or no of a measure's sign
        return MEASURE_VERDICT_NOTE if outcome.verdict else FIGURE_NOTE
    return VERDICT_NOTE if outcome.verdict else EXTRACTIVE_NOTE
