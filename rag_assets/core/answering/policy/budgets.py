"""The evidence budget of an ask: rdr2 gives the reader at most the words rag-hybrid gives it for
the same question (`StrategySpec.evidence_budget_from`), as the evaluation compares them."""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.answering.policy.catalogue import named_spec
from rag_assets.core.answering.session import AnsweringSession
from rag_assets.core.answering.types import StrategySpec


def evidence_budgets(session: AnsweringSession, queries: Sequence[str], spec: StrategySpec) -> list[int] | None:
    """The words `spec` may give the reader per question (None: unbudgeted)."""
    if not spec.evidence_budget_from:
        return None
    source = named_spec(spec.evidence_budget_from, spec.answer_style, None)
    return session.evidence_words(list(queries), source)
