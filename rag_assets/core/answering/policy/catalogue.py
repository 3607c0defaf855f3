"""Every answering strategy by name, built from one set of settings.

The `answers` asset runs the rows its config names; `rag ask`, the service, the routers'
validation, `evidence_evaluation` and the benchmarks build the same specs here, so a row of a given
name is one configuration everywhere (a label never means two settings).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.answer_metrics import word_count
from rag_assets.core.answering.policy.routing_choice import RoutingChoice
from rag_assets.core.answering.types import DEFAULT_ROUTER_KIND, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.errors import ConfigError

GENERATION_STRATEGIES = ("contregen", "disco", "disco-no-structure")
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
# built-in corpus ends within 20 minutes on 2 CPU cores (every generated row is one reader pass over
# the questions); the routers' bounds, other ablations and the LLM router's rows are asked for by
# name (run.datasets.yaml lists the headline set of the real-data run).
DEFAULT_STRATEGIES = (
    "no-retrieval",
    "rag-hybrid",
    "rdr2",
    *GENERATION_STRATEGIES,
    "dota",
    "rag-hybrid+r4",
    # the extractive form beside the generated rows (no reader call: seconds, not minutes)
    "rag-hybrid-extractive",
    "rdr2-extractive",
)
# rdr2's evidence is cut to the words this row gave the reader for the same question
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
# The strategy an ask runs when none is named.
ASKED_BY_DEFAULT = "rdr2"
# Older names still accepted (not listed in help): one name per strategy everywhere else.
ALIASES = {"rag": "rag-hybrid", "none": "no-retrieval"}
LONG_ANSWER_WORDS = 16
ANSWER_STYLES = ("short", "list", "long", "auto")


@dataclass(frozen=True, slots=True)
class StrategySettings:
    """The knobs every strategy's spec is built from (the `answers` asset's config holds them;
    the defaults are what `rag ask` and the service run)."""

    router: str = DEFAULT_ROUTER_KIND  # rdr2's router kind: encoder | llm
    retrieval_mode: str = "hybrid"  # rdr2's first-stage search
    rag_top_k: int = 5  # passages the rag strategies give the reader
    # rdr2's defaults are sized for `make run` on 2 CPU cores; on a GPU use top_k 3-5, 2-3 rounds
    top_k: int = 2  # documents rdr2 routes
    # first-stage passages grouped into top_k documents (20 beat 10 on conditionalqa and nq_wiki:
    # more of the answer's section is shown to the router)
    passages_per_query: int = 20
    expand_iterations: int = 1  # routing rounds after the first
    evidence_budget: bool = True  # rdr2 reads at most the words BUDGET_SOURCE read (rdr2-free: never)
    router_max_new_tokens: int = 48  # LLM router output tokens per view
    dota_words: int = 350  # dota keeps its top passages while within these words (0 = all)
    token_budget: int = 512  # router input per subtree (tokens), as the router learnt on
    # the generation-side rows (contregen, disco)
    tree_depth: int = 2
    tree_branching: int = 2
    contregen_top_k: int = 2
    disco_top_k: int = 3
    stage_max_new_tokens: int = 32
    # rdr2 routes with the settings `answer_policy` learned for the collection (passages, documents,
    # expand threshold) where it published some; False: with top_k and passages_per_query above
    learned_routing: bool = True
    # rdr2's evidence also holds the statement rows naming the question's line items
    # (core/answering/line_item_lookup.py); False: the router's choices alone
    line_items: bool = True

    def routing(self, learned: RoutingChoice | None) -> RoutingChoice | None:
        """The learned routing rdr2 runs with under these settings (None: the settings' own)."""
        return learned if self.learned_routing else None


DEFAULT_SETTINGS = StrategySettings()


def settings_from(config: object) -> StrategySettings:
    """The settings held by `config` (any object with some of the settings' fields as attributes:
    the `answers` asset's config, a benchmark's arguments); missing fields keep their defaults."""
    names = [f.name for f in dataclasses.fields(StrategySettings)]
    return StrategySettings(**{name: getattr(config, name) for name in names if hasattr(config, name)})


def strategy_specs(
    settings: StrategySettings,
    style: str,
    llm_adapter: str | None,
    budget: bool = True,
    routing: RoutingChoice | None = None,
) -> dict[str, StrategySpec]:
    """Every strategy by name (`STRATEGIES`), as `settings` shape them; every rdr2 row routing
    with `routing`'s learned settings where given (the collection's ask policy)."""
    budget_from = BUDGET_SOURCE if budget and settings.evidence_budget else None
    rdr2 = _rdr2_spec(settings, style, llm_adapter, budget_from)
    specs = {
        "no-retrieval": StrategySpec("no-retrieval", "none", top_k=0, answer_style=style),
        "rag-dense": StrategySpec(
            "rag-dense", "rag", retrieval_mode="dense", top_k=settings.rag_top_k, answer_style=style
        ),
        "rag-hybrid": StrategySpec(
            "rag-hybrid", "rag", retrieval_mode="hybrid", top_k=settings.rag_top_k, answer_style=style
        ),
        **_rdr2_variants(rdr2, llm_adapter),
        **generation_specs(settings, style),
    }
    specs.update(_hybrid_variants(specs["rag-hybrid"], rdr2, settings.dota_words))
    for name in ("rag-hybrid", "rdr2"):  # the extractive form of retrieve-and-read and of rdr2
        specs[f"{name}-extractive"] = dataclasses.replace(
            specs[name], name=f"{name}-extractive", answer_form="extractive"
        )
    if routing is not None:
        specs = {name: routing.apply(spec) for name, spec in specs.items()}
    return specs


def _rdr2_spec(
    settings: StrategySettings, style: str, llm_adapter: str | None, budget_from: str | None
) -> StrategySpec:
    return StrategySpec(
        "rdr2",
        "rdr2",
        retrieval_mode=settings.retrieval_mode,
        top_k=settings.top_k,
        passages_per_query=settings.passages_per_query,
        expand_iterations=settings.expand_iterations,
        adapter=llm_adapter if settings.router == "llm" else None,
        answer_style=style,
        router_max_new_tokens=settings.router_max_new_tokens,
        token_budget=settings.token_budget,
        router=settings.router,
        evidence_budget_from=budget_from,
        line_items=settings.line_items,
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


def generation_specs(settings: StrategySettings, style: str) -> dict[str, StrategySpec]:
    """contregen, disco and disco-no-structure, with the settings' knobs and the reader style."""
    common = dict(
        retrieval_mode=settings.retrieval_mode, answer_style=style, stage_max_new_tokens=settings.stage_max_new_tokens
    )
    return {
        "contregen": StrategySpec(
            "contregen",
            "contregen",
            top_k=settings.contregen_top_k,
            tree_depth=settings.tree_depth,
            tree_branching=settings.tree_branching,
            **common,
        ),
        "disco": StrategySpec("disco", "disco", top_k=settings.disco_top_k, **common),
        "disco-no-structure": StrategySpec(
            "disco-no-structure", "disco", top_k=settings.disco_top_k, discourse=False, **common
        ),
    }


def answer_style(configured: str, questions: Sequence[Question]) -> str:
    """The reader style: as configured, or (auto) long when most gold answers are long."""
    if configured not in ANSWER_STYLES:
        raise ConfigError(f"answer style must be one of {', '.join(ANSWER_STYLES)}, not {configured!r}")
    if configured != "auto":
        return configured
    long = sum(1 for q in questions if q.answers and max(word_count(a) for a in q.answers) > LONG_ANSWER_WORDS)
    return "long" if questions and long * 2 > len(questions) else "short"


def canonical_strategy(name: str) -> str:
    """The one name of an askable strategy (old aliases mapped); a ConfigError names the choices."""
    canonical = ALIASES.get(name, name)
    if canonical not in ASKABLE:
        raise ConfigError(f"strategy must be one of {', '.join(ASKABLE)}, not {name!r}")
    return canonical


def named_spec(
    name: str,
    style: str,
    llm_adapter: str | None,
    settings: StrategySettings = DEFAULT_SETTINGS,
    routing: RoutingChoice | None = None,
) -> StrategySpec:
    """The spec of the askable strategy `name` under `settings` (by default the evaluated ones),
    routing with `routing`'s learned settings where given."""
    return strategy_specs(settings, style, llm_adapter, routing=routing)[canonical_strategy(name)]
