"""The `answers` asset's config: which strategies run, on which questions, with which knobs.

The strategies themselves, by name, are built in one place (core/answering/policy/catalogue.py)
from the settings this config holds; its defaults are the catalogue's, so a default run answers
with what `rag ask` and the service run.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from rag_assets.core.answering.policy.catalogue import (
    BUDGET_SOURCE,
    DEFAULT_SETTINGS,
    DEFAULT_STRATEGIES,
    STRATEGIES,
    StrategySettings,
    settings_from,
)
from rag_assets.defs.config_choices import only_known
from rag_assets.defs.evaluation.generation_config import GenerationConfig


class AnswersConfig(GenerationConfig):
    split: str = Field(
        default="test",
        description='Evaluation questions ("dev,test": both); an empty split falls back to dev, then all.',
    )
    max_questions: int = Field(default=0, ge=0, description="Questions evaluated at most (0 = every question).")
    strategies: list[str] = Field(
        default=list(DEFAULT_STRATEGIES), description=f"Strategies to run, among {list(STRATEGIES)}."
    )
    router: Literal["encoder", "llm"] = Field(
        default=DEFAULT_SETTINGS.router,
        description="Router kind of `rdr2`, its ablations and grids (encoder: trained node scorer; llm: LoRA adapter).",
    )
    retrieval_mode: Literal["dense", "bm25", "hybrid"] = Field(
        default=DEFAULT_SETTINGS.retrieval_mode, description="rdr2's first-stage search."
    )
    rag_top_k: int = Field(
        default=DEFAULT_SETTINGS.rag_top_k, ge=0, le=100, description="Passages the rag strategies give the reader."
    )
    # rdr2's defaults are sized for `make run` on 2 CPU cores; on a GPU use top_k 3-5 and 2-3 expand rounds.
    top_k: int = Field(default=DEFAULT_SETTINGS.top_k, ge=0, le=50, description="Documents rdr2 routes.")
    passages_per_query: int = Field(
        default=DEFAULT_SETTINGS.passages_per_query,
        ge=1,
        le=200,
        description="rdr2: first-stage passages grouped into top_k documents; their nodes are lit in the first "
        "view (20 beat 10 on conditionalqa and nq_wiki: more of the answer's section is shown to the router).",
    )
    expand_iterations: int = Field(
        default=DEFAULT_SETTINGS.expand_iterations, ge=0, le=10, description="rdr2: routing rounds after the first."
    )
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
    expand_grid: list[int] = Field(
        default=[], description="Test-time scaling over expand iterations, e.g. [0, 1, 2] ([] = none)."
    )
    top_k_grid: list[int] = Field(
        default=[], description="Test-time scaling over documents routed, e.g. [1, 2] ([] = none)."
    )
    evidence_budget: bool = Field(
        default=DEFAULT_SETTINGS.evidence_budget,
        description=f"Cut rdr2's routed evidence to the words {BUDGET_SOURCE} gave the reader for the same question "
        "(rdr2-free is always free).",
    )
    answer_style: Literal["short", "list", "long", "auto"] = Field(
        default="auto", description="Reader prompt; auto = long when most gold answers are long."
    )
    router_max_new_tokens: int = Field(
        default=DEFAULT_SETTINGS.router_max_new_tokens, ge=8, le=512, description="LLM router output tokens per view."
    )
    dota_words: int = Field(
        default=DEFAULT_SETTINGS.dota_words,
        ge=0,
        le=100000,
        description="dota: the top passages are kept while within these words (0 = all).",
    )
    token_budget: int = Field(
        default=DEFAULT_SETTINGS.token_budget,
        ge=64,
        le=32768,
        description="Router input per subtree (tokens), as routing_subtrees built what the router learnt on.",
    )

    single_store: list[str] = Field(
        default=[],
        description="Collections whose questions are also answered on the single store: each searched, routed and "
        "answered within its own document (its gold_doc) only, by rag-hybrid and rdr2, generated and extractive "
        "(those configured); those rows are named '... (single store)'.",
    )

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names: list[str]) -> list[str]:
        return only_known(names, STRATEGIES, "strategies")

    def settings(self) -> StrategySettings:
        """The strategy settings this config holds (core/answering/policy/catalogue.py)."""
        return settings_from(self)
