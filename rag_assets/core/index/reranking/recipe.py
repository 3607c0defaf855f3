"""The whole reranker recipe for one collection (the `passage_reranker` asset and the benchmark
share it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.passages import Passage
from rag_assets.core.index.reranking.labels import held_out, is_gold_document, is_gold_passage, rerank_groups
from rag_assets.core.index.reranking.training import (
    SYNTHETIC_SCOPES,
    RerankerSettings,
    RerankerTrainingResult,
    train_reranker,
)
from rag_assets.core.index.vector_index import search_text


def train_collection_reranker(
    base_model: Path,
    passages: Sequence[Passage],
    labelled: Sequence[Question],
    synthetic: Sequence[Question],
    hits: Callable[[str], Sequence],
    output_root: Path,
    settings: RerankerSettings | None = None,
    *,
    device: str = "cpu",
    on_step: Callable[[int, int, float], None] | None = None,
    extra_record: Mapping[str, object] | None = None,
) -> RerankerTrainingResult | None:
    """The whole recipe for one collection (the `passage_reranker` asset and the benchmark share
    it): the synthetic questions kept to `settings.synthetic_scope`, a stable slice of the
    labelled train questions held out (topped up with held-out synthetic ones to
    `min_validation`), groups from the rest with hard negatives from `hits(query)` (first-stage `SearchHit`s),
    training, and the fusion calibrated on the held-out questions. None when no group can be made."""
    settings = settings or RerankerSettings()
    if settings.synthetic_scope not in SYNTHETIC_SCOPES:
        raise ValueError(f"synthetic_scope must be one of {SYNTHETIC_SCOPES}, not {settings.synthetic_scope!r}")
    synthetic = list(synthetic)
    offered = len(synthetic)
    # documents as (doc id, title); questions name their gold by title, doc key or file stem
    documents = {(p.doc_id, p.heading_path[0] if p.heading_path else "") for p in passages}
    asked_about = [d for d in documents if any(is_gold_document(q, *d) for q in labelled)]
    if settings.synthetic_scope == "labelled-documents" and asked_about:
        # A synthetic question about a document no user asks about teaches the wrong prior: on the
        # e-manuals (33 near-identical manuals, every question about the Galaxy S10) it rewards
        # the same section of another manual, and the reranker learnt nothing there.
        synthetic = [q for q in synthetic if any(is_gold_document(q, *d) for d in asked_about)]
    train, held = held_out(labelled, settings.validation_fraction)
    held = held[: settings.max_validation]
    synthetic_kept, synthetic_held = held_out(synthetic, settings.validation_fraction)
    wanted = min(settings.min_validation, settings.max_validation) - len(held)
    topped_up = synthetic_held[: max(wanted, 0)]
    held = [*held, *topped_up]
    # the synthetic questions not needed for calibration still train
    synthetic = [*synthetic_kept, *synthetic_held[max(wanted, 0) :]]
    groups = rerank_groups(
        [*train, *synthetic], passages, lambda q: [h.passage_id for h in hits(q)], negatives=settings.negatives
    )
    if not groups:
        return None
    held_rows = []
    for question in held:
        found = list(hits(question.query))
        held_rows.append(
            (
                question.query,
                [h.score for h in found],
                [search_text(h.heading_path, h.text) for h in found],
                [is_gold_passage(question, h) for h in found],
            )
        )
    synthetic_queries = {q.query for q in synthetic}
    result = train_reranker(
        base_model,
        groups,
        held_rows,
        output_root,
        settings,
        device=device,
        on_step=on_step,
        progress=False,
        extra_record=extra_record,
    )
    result.details["groups_synthetic"] = sum(g.query in synthetic_queries for g in groups)
    result.details["calibrated_on_synthetic"] = len(topped_up)
    result.details["synthetic_out_of_scope"] = offered - len(synthetic_kept) - len(synthetic_held)
    return result
