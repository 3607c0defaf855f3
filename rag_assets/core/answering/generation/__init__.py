"""The generation-side strategies: ConTReGen (`contregen.py`) and Disco-RAG (`disco.py`), their
prompts and grammars (`prompts.py`), validating parsers (`parsers.py`) and stage batching
(`stages.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.core.answering.strategies import AnswerOutcome, Retrieve, StrategySpec
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine


def run_generation_strategy(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine,
) -> list[AnswerOutcome]:
    """A `contregen` or `disco` spec for all questions; each stage is one engine call for all."""
    if spec.kind == "contregen":
        from rag_assets.core.answering.generation.contregen import run_contregen

        return run_contregen(questions, spec, retrieve=retrieve, trees=trees, engine=engine, reader=reader)
    if spec.kind == "disco":
        from rag_assets.core.answering.generation.disco import run_disco

        return run_disco(questions, spec, retrieve=retrieve, trees=trees, engine=engine, reader=reader)
    raise ValueError(f"strategy {spec.name!r}: kind {spec.kind!r} is not a generation strategy")
