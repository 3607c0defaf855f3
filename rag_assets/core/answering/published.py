"""What was published for one collection, as every answering user reads it: the LanceDB version
paired with the catalogue's passages and the trained pieces (routers and their similarity
thresholds, passage reranker, namespace router, reorder policy), in one typed record.

The `answers` and `evidence_evaluation` assets, `router_metrics`, the router's validation and the
query service all build their `AnsweringSession` from a `PublishedCollection`, so they answer with
the same pieces for the same catalogue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from rag_assets.core.answering.no_answer import RelevanceFloor
from rag_assets.core.answering.policy.default_form import DEFAULT_FORM, FormChoice
from rag_assets.core.answering.policy.routing_choice import RoutingChoice
from rag_assets.core.routing.folders import router_folder_kind
from rag_assets.core.routing.teachers import SimilarityThresholds
from rag_assets.core.store.publication import IndexPin, pin_index
from rag_assets.core.store.published_models import ALL_COLLECTIONS, PublishedModel, published_models

TRAINED_ROUTER_KINDS = ("encoder", "llm")
# the published_models kind of the `answer_policy` asset's row (its model id: the default form)
ANSWER_POLICY_KIND = "answer_policy"
ROUTING_DETAILS = "routing"  # the key of that row's details holding rdr2's learned routing settings


@dataclass(frozen=True, slots=True)
class PublishedCollection:
    """Everything an answer of `collection` is produced with, besides the models' weights."""

    collection: str
    index: IndexPin
    routers: Mapping[str, PublishedModel]  # trained kind (encoder, llm) -> its complete folder
    similarity: SimilarityThresholds  # the untrained encoder's thresholds, calibrated by router_adapter
    reranker: PublishedModel | None
    namespaces: PublishedModel | None
    policy: PublishedModel | None
    router_notes: tuple[str, ...] = ()  # which routers are missing, and why
    piece_notes: tuple[str, ...] = ()  # which retrieval-side pieces are missing, and why
    # the default answer form and the relevance floor the `answer_policy` asset measured
    # (core/answering/policy/default_form.py); None: never measured for this collection
    form_choice: FormChoice | None = None
    # rdr2's routing settings learned with it (policy/routing_choice.py); None: never measured
    routing_choice: RoutingChoice | None = None

    @property
    def default_form(self) -> str:
        return self.form_choice.form if self.form_choice is not None else DEFAULT_FORM

    @property
    def relevance_floor(self) -> RelevanceFloor | None:
        """Below it the documents are said not to answer: measured with the default form."""
        return self.form_choice.floor if self.form_choice is not None else None

    @property
    def notes(self) -> tuple[str, ...]:
        return self.router_notes + self.piece_notes

    @property
    def llm_adapter(self) -> str | None:
        llm = self.routers.get("llm")
        return llm.model_id if llm else None

    def adapters(self) -> dict[str, Path]:
        """The LoRA adapters the engine loads: the trained LLM router's, when published."""
        llm = self.routers.get("llm")
        return {llm.model_id: Path(llm.path)} if llm and llm.model_id and llm.path else {}


def load_published(con: duckdb.DuckDBPyConnection, collection: str) -> PublishedCollection:
    """The collection's published index and pieces; a piece whose step never ran, trained none, or
    whose folder is gone is absent, with a note saying which. Read-only."""
    found = published_models(con, collection)
    notes: list[str] = []  # the routers'
    pieces: list[str] = []  # the retrieval side's
    routers: dict[str, PublishedModel] = {}
    if not any(kind in found for kind in ("similarity", *TRAINED_ROUTER_KINDS)):
        notes.append(f"router_adapter was never materialized for {collection}")
    for kind in TRAINED_ROUTER_KINDS:
        model = found.get(kind)
        if model is None or model.path is None:
            continue
        if router_folder_kind(Path(model.path)) != kind:
            notes.append(f"{kind} router {model.model_id} is gone from the catalogue or disk")
            continue
        routers[kind] = model
    similarity = found.get("similarity")
    thresholds = SimilarityThresholds()
    if similarity is not None and "answer" in similarity.details:
        thresholds = SimilarityThresholds(float(similarity.details["answer"]), float(similarity.details["expand"]))
    return PublishedCollection(
        collection=collection,
        index=pin_index(con, collection),
        routers=routers,
        similarity=thresholds,
        reranker=_usable(found.get("reranker"), "passage_reranker", "passage reranker", collection, pieces),
        namespaces=_usable(found.get("namespaces"), "namespace_router", "namespace router", None, pieces),
        policy=_usable(found.get("reorder_policy"), "reorder_policy", "reorder policy", collection, pieces),
        router_notes=tuple(notes),
        piece_notes=tuple(pieces),
        form_choice=_form_choice(found.get(ANSWER_POLICY_KIND)),
        routing_choice=_routing_choice(found.get(ANSWER_POLICY_KIND)),
    )


def published_form_choice(con: duckdb.DuckDBPyConnection, collection: str) -> FormChoice | None:
    """The default form and floor `answer_policy` published for `collection` (None: never), read
    alone: the report and the policy's check need no index pin or router folders."""
    return _form_choice(published_models(con, collection).get(ANSWER_POLICY_KIND))


def _form_choice(model: PublishedModel | None) -> FormChoice | None:
    if model is None or model.model_id not in ("generated", "extractive"):
        return None
    return FormChoice.from_details(model.model_id, dict(model.details))


def published_routing_choice(con: duckdb.DuckDBPyConnection, collection: str) -> RoutingChoice | None:
    """rdr2's routing settings `answer_policy` published for `collection` (None: never)."""
    return _routing_choice(published_models(con, collection).get(ANSWER_POLICY_KIND))


def _routing_choice(model: PublishedModel | None) -> RoutingChoice | None:
    if model is None or not isinstance(model.details.get(ROUTING_DETAILS), dict):
        return None
    return RoutingChoice.from_details(model.details[ROUTING_DETAILS])


def _usable(
    model: PublishedModel | None, step: str, name: str, collection: str | None, notes: list[str]
) -> PublishedModel | None:
    """`model` when its folder is there; else None, with a note on why."""
    where = f" for {collection}" if collection else ""
    if model is None:
        notes.append(f"{step} was never materialized{where}")
        return None
    if model.path is None:
        reason = model.details.get("reason")
        notes.append(f"no {name} was trained{where}" + (f" ({reason})" if reason else ""))
        return None
    if not Path(model.path).is_dir():
        notes.append(f"the published {name} {model.path} is gone")
        return None
    return model


def published_namespace_router(con: duckdb.DuckDBPyConnection) -> Path | None:
    """The folder of the namespace router `namespace_router` last published (None: none usable)."""
    piece = published_models(con, ALL_COLLECTIONS).get("namespaces")
    return Path(piece.path) if piece and piece.path and Path(piece.path).is_dir() else None
