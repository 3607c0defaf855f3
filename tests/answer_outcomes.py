"""A reader's outcome made by hand, for tests that store or score answers without running a model."""

from __future__ import annotations

from rag_assets.core.answering.types import AnswerOutcome


def answer_outcome(question: str, answer: str, evidence: str, **fields: object) -> AnswerOutcome:
    """An outcome with `answer` read from `evidence`; no citations, router or engine work unless
    `fields` say otherwise (e.g. reader_prompt_tokens=50, seconds=0.5)."""
    values: dict[str, object] = dict(
        question=question,
        answer=answer,
        evidence=evidence,
        evidence_words=len(evidence.split()),
        citations=[],
        passage_ids=[],
        retrieved_doc_ids=[],
        router_prompt_tokens=0,
        router_output_tokens=0,
        reader_prompt_tokens=0,
        reader_output_tokens=0,
        engine_calls=1,
        seconds=0.0,
        expelled=0,
        refused_docs=0,
    )
    values.update(fields)
    return AnswerOutcome(**values)  # type: ignore[arg-type]
