"""The `answers` asset's generation-side rows: ConTReGen (`contregen`) and Disco-RAG (`disco`,
and its ablation `disco-no-structure`): their config, specs and metadata (the strategies
themselves live in core/generation).

Both run several LLM stages per question (contregen: 2 * depth + 1 engine calls, disco: 4), so by
default they answer only the first `generation_max_questions` evaluation questions: sized for
`make run` on 2 CPU cores; 0 = all (GPU / OpenAI backends)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg
from pydantic import Field

from rag_assets.core.answering.policy.catalogue import DEFAULT_SETTINGS, GENERATION_STRATEGIES
from rag_assets.core.answering.types import AnswerOutcome
from rag_assets.defs.metadata import markdown_table


class GenerationConfig(dg.Config):
    generation_max_questions: int = Field(
        default=2,
        ge=0,
        description="contregen / disco / disco-no-structure answer at most this many of the evaluation questions "
        "(the first ones; 0 = all): each runs several LLM stages per question.",
    )
    tree_depth: int = Field(
        default=DEFAULT_SETTINGS.tree_depth, ge=0, le=3, description="contregen: sub-query tree depth (the paper's 2)."
    )
    tree_branching: int = Field(
        default=DEFAULT_SETTINGS.tree_branching, ge=1, le=4, description="contregen: sub-queries per node."
    )
    contregen_top_k: int = Field(
        default=DEFAULT_SETTINGS.contregen_top_k, ge=0, le=20, description="contregen: passages each leaf retrieves."
    )
    disco_top_k: int = Field(
        default=DEFAULT_SETTINGS.disco_top_k, ge=0, le=10, description="disco: chunks parsed, related and planned over."
    )
    stage_max_new_tokens: int = Field(
        default=DEFAULT_SETTINGS.stage_max_new_tokens,
        ge=8,
        le=512,
        description="contregen / disco: output tokens of each intermediate stage.",
    )


def generation_metadata(
    config: GenerationConfig, outcomes: Mapping[str, Sequence[AnswerOutcome]]
) -> dict[str, dg.MetadataValue]:
    """Per generation row: questions answered (the cap) and every malformed-output count of its
    stages (invalid lines, fallbacks), summed over its answers."""
    rows = {name: list(results) for name, results in outcomes.items() if name in GENERATION_STRATEGIES}
    if not rows:
        return {}
    keys = list(
        dict.fromkeys(k for results in rows.values() for o in results for k in (o.structure or {}).get("counts", {}))
    )
    table = [
        (name, len(results), *(sum((o.structure or {}).get("counts", {}).get(k, 0) for o in results) for k in keys))
        for name, results in rows.items()
    ]
    cap = config.generation_max_questions
    return {
        "generation_questions": dg.MetadataValue.md(
            f"contregen / disco rows answer {'all' if not cap else f'at most the first {cap}'} evaluation question(s) "
            "(`generation_max_questions`)"
        ),
        "generation_parse": dg.MetadataValue.md(markdown_table(["strategy", "questions", *keys], table)),
    }
