"""What the `answers` asset can run: its config and every strategy it can name, built from it.

A module of its own so that `router_adapter` (upstream of `answers`) can judge its router settings
with exactly the default `rdr2` row `answers` will run, without importing the asset module.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import dagster as dg
from pydantic import Field, field_validator

from rag_assets.core.answer_metrics import word_count
from rag_assets.core.answering.types import DEFAULT_ROUTER_KIND, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.errors import ConfigError
from rag_assets.defs.config_choices import only_known
from rag_assets.defs.evaluation.generation_config import GENERATION_STRATEGIES, GenerationConfig, generation_specs

STRATEGIES = (
    "no-retrieval",
    "rag-dense",
    "rag-hybrid",
    "rdr2",
    "rdr2-free",
    "rdr2-encoder",
    "rdr2-llm",
    "rdr2-llm-rank",
    "rdr2-similarity",
    "rdr2-base",
    "rdr2-oracle",
    "rdr2-hit-nodes",
    "rdr2-no-expand",
    "rdr2-no-refuse",
    "rdr2-no-structure",
    *GENERATION_STRATEGIES,
    "rag-hybrid-rerank",
    "rag-hybrid-rewrite",
    "dota",
    "rag-hybrid-edges",
    "rag-hybrid+r4",
    "rdr2+r4",
    "rdr2-rerank",
    "rag-hybrid-extractive",
    "rdr2-extractive",
)
# The default report: the two baselines, RDR2 with the default (encoder) router, and one row per
# other seed system (with Disco-RAG's own falsification ablation). Sized so `make run` on the
# built-in corpus ends within 20 minutes on 2 CPU cores (every row is one reader pass over the
# questions, ~40 s there: 18 min 35 s from a fresh clone, measured with rdr2-oracle where
# disco-no-structure is, ~45 s each); the routers' bounds, other
# ablations and the LLM router's rows are asked for by name (run.datasets.yaml lists the
# headline set of the real-data run).
DEFAULT_STRATEGIES = [
    "no-retrieval",
    "rag-hybrid",
    "rdr2",
    *GENERATION_STRATEGIES,  # contregen, disco, disco-no-structure
    "dota",
    "rag-hybrid+r4",
    # the extractive form beside the generated rows (no reader call: seconds, not minutes)
    "rag-hybrid-extractive",
    "rdr2-extractive",
]
BUDGET_SOURCE = "rag-hybrid"
# What `rag ask` and the service can answer with: every row that needs no gold labels (the
# oracle) and no trained piece beyond the routers and the reranker (dota, the reorder policy).
ASKABLE = (
    "no-retrieval",
    "rag-dense",
    "rag-hybrid",
    "rdr2",
    "rdr2-free",
    "rdr2-encoder",
    "rdr2-llm",
    "rdr2-similarity",
    "rdr2-base",
    "rdr2-hit-nodes",
    "rdr2-no-expand",
    "rdr2-no-refuse",
    "rdr2-no-structure",
    *GENERATION_STRATEGIES,
    "rag-hybrid-rerank",
    "rdr2-rerank",
    "rag-hybrid-extractive",
    "rdr2-extractive",
)
# Older names still accepted (not listed in help): one name per strategy everywhere else.
ALIASES = {"rag": "rag-hybrid", "none": "no-retrieval"}
LONG_ANSWER_WORDS = 16


class AnswersConfig(GenerationConfig):
    split: str = Field(
        default="test",
        description='Evaluation questions ("dev,test": both); an empty split falls back to dev, then all.',
    )
    max_questions: int = Field(default=0, ge=0, description="Questions evaluated at most (0 = every question).")
    strategies: list[str] = Field(
        default=DEFAULT_STRATEGIES, description=f"Strategies to run, among {list(STRATEGIES)}."
    )
    router: Literal["encoder", "llm"] = Field(
        default=DEFAULT_ROUTER_KIND,
        description="Router kind of `rdr2`, its ablations and grids (encoder: trained node scorer; llm: LoRA adapter).",
    )
    retrieval_mode: Literal["dense", "bm25", "hybrid"] = Field(
        default="hybrid", description="rdr2's first-stage search."
    )
    rag_top_k: int = Field(default=5, ge=0, le=100, description="Passages the rag strategies give the reader.")
    # rdr2's defaults are sized for `make run` on 2 CPU cores; on a GPU use top_k 3-5 and 2-3 expand rounds.
    top_k: int = Field(default=2, ge=0, le=50, description="Documents rdr2 routes.")
    passages_per_query: int = Field(
        default=20,
        ge=1,
        le=200,
        description="rdr2: first-stage passages grouped into top_k documents; their nodes are lit in the first "
        "view (20 beat 10 on conditionalqa and nq_wiki: more of the answer's section is shown to the router).",
    )
    expand_iterations: int = Field(default=1, ge=0, le=10, description="rdr2: routing rounds after the first.")
    expand_grid: list[int] = Field(
        default=[], description="Test-time scaling over expand iterations, e.g. [0, 1, 2] ([] = none)."
    )
    top_k_grid: list[int] = Field(
        default=[], description="Test-time scaling over documents routed, e.g. [1, 2] ([] = none)."
    )
    evidence_budget: bool = Field(
        default=True,
        description=f"Cut rdr2's routed evidence to the words {BUDGET_SOURCE} gave the reader for the same question "
        "(rdr2-free is always free).",
    )
    answer_style: Literal["short", "list", "long", "auto"] = Field(
        default="auto", description="Reader prompt; auto = long when most gold answers are long."
    )
    router_max_new_tokens: int = Field(default=48, ge=8, le=512, description="LLM router output tokens per view.")
    dota_words: int = Field(
        default=350, ge=0, le=100000, description="dota: the top passages are kept while within these words (0 = all)."
    )
    token_budget: int = Field(
        default=512,
        ge=64,
        le=32768,
        description="Router input per subtree (tokens), as routing_subtrees built what the router learnt on.",
    )

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names: list[str]) -> list[str]:
        return only_known(names, STRATEGIES, "strategies")


def strategy_specs(
    config: AnswersConfig, style: str, llm_adapter: str | None, budget: bool = True
) -> dict[str, StrategySpec]:
    """Every strategy by label (the config's `strategies` choose which run; the grids use 'rdr2')."""
    budget_from = BUDGET_SOURCE if budget and config.evidence_budget else None
    rdr2 = _rdr2_spec(config, style, llm_adapter, budget_from)
    specs = {
        "no-retrieval": StrategySpec("no-retrieval", "none", top_k=0, answer_style=style),
        "rag-dense": StrategySpec(
            "rag-dense", "rag", retrieval_mode="dense", top_k=config.rag_top_k, answer_style=style
        ),
        "rag-hybrid": StrategySpec(
            "rag-hybrid", "rag", retrieval_mode="hybrid", top_k=config.rag_top_k, answer_style=style
        ),
        **_rdr2_variants(rdr2, llm_adapter),
        **generation_specs(config, style),
    }
    specs.update(_hybrid_variants(specs["rag-hybrid"], rdr2, config.dota_words))
    for name in ("rag-hybrid", "rdr2"):  # the extractive form of retrieve-and-read and of rdr2
        specs[f"{name}-extractive"] = dataclasses.replace(
            specs[name], name=f"{name}-extractive", answer_form="extractive"
        )
    unknown = sorted(set(config.strategies) - set(specs))
    if unknown:
        raise dg.Failure(f"unknown strategies {unknown}; expected some of {list(STRATEGIES)}")
    return specs


def _rdr2_spec(config: AnswersConfig, style: str, llm_adapter: str | None, budget_from: str | None) -> StrategySpec:
    """The main rdr2 strategy, as the config sets it."""
    return StrategySpec(
        "rdr2",
        "rdr2",
        retrieval_mode=config.retrieval_mode,
        top_k=config.top_k,
        passages_per_query=config.passages_per_query,
        expand_iterations=config.expand_iterations,
        adapter=llm_adapter if config.router == "llm" else None,
        answer_style=style,
        router_max_new_tokens=config.router_max_new_tokens,
        token_budget=config.token_budget,
        router=config.router,
        evidence_budget_from=budget_from,
    )


def _rdr2_variants(rdr2: StrategySpec, llm_adapter: str | None) -> dict[str, StrategySpec]:
    """rdr2, uncut, with each router, and its ablations (no expand, no refuse, no structure)."""

    def routed(name: str, router: str, adapter: str | None = None) -> StrategySpec:
        return dataclasses.replace(rdr2, name=name, router=router, adapter=adapter)

    return {
        "rdr2": rdr2,
        "rdr2-free": dataclasses.replace(rdr2, name="rdr2-free", evidence_budget_from=None),
        "rdr2-encoder": routed("rdr2-encoder", "encoder"),
        "rdr2-llm": routed("rdr2-llm", "llm", llm_adapter),
        "rdr2-llm-rank": routed("rdr2-llm-rank", "llm-rank", llm_adapter),
        "rdr2-similarity": routed("rdr2-similarity", "similarity"),
        "rdr2-base": routed("rdr2-base", "llm"),
        "rdr2-oracle": routed("rdr2-oracle", "oracle"),
        "rdr2-hit-nodes": routed("rdr2-hit-nodes", "hit-nodes"),
        "rdr2-no-expand": dataclasses.replace(rdr2, name="rdr2-no-expand", allow_expand=False),
        "rdr2-no-refuse": dataclasses.replace(rdr2, name="rdr2-no-refuse", allow_refuse=False),
        "rdr2-no-structure": dataclasses.replace(rdr2, name="rdr2-no-structure", structure=False),
    }


def _hybrid_variants(hybrid: StrategySpec, rdr2: StrategySpec, dota_words: int) -> dict[str, StrategySpec]:
    """rag-hybrid reranked, rewritten, reordered and as DOTA; rdr2 reordered and reranked."""
    return {
        "rag-hybrid-rerank": dataclasses.replace(hybrid, name="rag-hybrid-rerank", rerank=True),
        "rag-hybrid-rewrite": dataclasses.replace(hybrid, name="rag-hybrid-rewrite", rewrite=True),
        "dota": dataclasses.replace(
            hybrid,
            name="dota",
            kind="dota",
            rewrite=True,
            route_namespaces=True,
            rerank=True,
            aggregate_words=dota_words,
        ),
        "rag-hybrid-edges": dataclasses.replace(hybrid, name="rag-hybrid-edges", reorder="edges"),
        "rag-hybrid+r4": dataclasses.replace(hybrid, name="rag-hybrid+r4", reorder="learned"),
        "rdr2+r4": dataclasses.replace(rdr2, name="rdr2+r4", reorder="learned"),
        "rdr2-rerank": dataclasses.replace(rdr2, name="rdr2-rerank", rerank=True),
    }


def answer_style(config_style: str, questions: list[Question]) -> str:
    """The reader style: as configured, or (auto) long when most gold answers are long."""
    if config_style != "auto":
        return config_style
    long = sum(1 for q in questions if q.answers and max(word_count(a) for a in q.answers) > LONG_ANSWER_WORDS)
    return "long" if questions and long * 2 > len(questions) else "short"


def canonical_strategy(name: str) -> str:
    """The one name of an askable strategy (old aliases mapped); a ConfigError names the choices."""
    canonical = ALIASES.get(name, name)
    if canonical not in ASKABLE:
        raise ConfigError(f"strategy must be one of {', '.join(ASKABLE)}, not {name!r}")
    return canonical


def interactive_spec(strategy: str, style: str, llm_adapter: str | None) -> StrategySpec:
    """The spec an interactive answer (`rag ask`, the service) runs: the `answers` asset's own row
    of that name under its default config, so a default answer is the evaluated configuration."""
    return strategy_specs(AnswersConfig(), style, llm_adapter)[canonical_strategy(strategy)]
