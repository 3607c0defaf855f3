"""`answers`: every strategy's answers to the evaluation questions, with their lineage.

Strategies (labels in `answers.strategy`): no-retrieval; retrieve-and-read with dense and with
hybrid search (rag-dense, rag-hybrid); RDR2 with the collection's latest trained router adapter
(rdr2); and the ablations rdr2-base (the untrained base model routes), rdr2-no-expand,
rdr2-no-refuse, rdr2-no-structure. Test-time scaling rows re-run rdr2 over a grid of expand
iterations and of top-k documents (grid = 'expand_iterations' | 'top_k'); a grid point equal to
the main rdr2 settings reuses its answers instead of recomputing them.
"""

import dataclasses
import time
from collections import Counter
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.answer_metrics import word_count
from rag_assets.core.catalogue import load_question_rows, load_trees
from rag_assets.core.engines.cache import CachingEngine
from rag_assets.core.lineage import AnswerRecord, answer_versions, build_record, index_version, store_answers, utc_now
from rag_assets.core.questions import Question
from rag_assets.core.retrieval import search
from rag_assets.core.routing_data import latest_adapter
from rag_assets.core.strategies import AnswerOutcome, StrategySpec, run_strategy
from rag_assets.metadata import counter_table, markdown_table
from rag_assets.partitions import collection_partitions
from resources.embedder import EmbedderResource
from resources.llm import LLMResource
from resources.vectors import VectorStoreResource

STRATEGIES = (
    "no-retrieval",
    "rag-dense",
    "rag-hybrid",
    "rdr2",
    "rdr2-base",
    "rdr2-no-expand",
    "rdr2-no-refuse",
    "rdr2-no-structure",
)
SOURCE = "evaluation"
LONG_ANSWER_WORDS = 16


class AnswersConfig(dg.Config):
    split: str = "test"  # evaluation questions ("dev,test": both); an empty split falls back to dev, then all
    max_questions: int = 0  # 0 = every question of the split
    strategies: list[str] = list(STRATEGIES)
    retrieval_mode: str = "hybrid"  # first-stage search of rdr2
    rag_top_k: int = 5  # passages the rag strategies give the reader
    # rdr2's defaults are sized for `make run` on 2 CPU cores (every round routes every document of
    # every question through the model); on a GPU use top_k 3-5, expand_iterations 2-3 and wider grids.
    top_k: int = 2  # documents rdr2 routes
    passages_per_query: int = 10  # rdr2: first-stage passages grouped into top_k documents
    expand_iterations: int = 1
    expand_grid: list[int] = [0, 1]  # test-time scaling over expand iterations ([] = none)
    top_k_grid: list[int] = [1, 2]  # test-time scaling over documents routed ([] = none)
    answer_style: str = "auto"  # short | list | long | auto (long when most gold answers are long)
    router_max_new_tokens: int = 48
    token_budget: int = 512  # router input per subtree (tokens; as routing_subtrees, what the router learnt on)


def pick_questions(con, collection: str, split: str) -> tuple[list[Question], str, str | None]:
    """The questions of `split`, else of dev, else all; with the split used and a note on fallback."""
    for candidate in dict.fromkeys([split, "dev", ""]):
        questions = load_question_rows(con, collection, candidate or None)
        if questions:
            used = candidate or "all"
            note = None if candidate == split else f"split {split!r} has no questions: evaluated on {used!r}"
            return questions, used, note
    return [], split, f"collection {collection!r} has no questions: nothing to evaluate"


def answer_style(config_style: str, questions: list[Question]) -> str:
    if config_style != "auto":
        return config_style
    long = sum(1 for q in questions if q.answers and max(word_count(a) for a in q.answers) > LONG_ANSWER_WORDS)
    return "long" if questions and long * 2 > len(questions) else "short"


def strategy_specs(config: AnswersConfig, style: str, adapter: str | None) -> dict[str, StrategySpec]:
    """Every strategy by label (the config's `strategies` choose which run; the grids use 'rdr2')."""
    rdr2 = StrategySpec(
        "rdr2",
        "rdr2",
        retrieval_mode=config.retrieval_mode,
        top_k=config.top_k,
        passages_per_query=config.passages_per_query,
        expand_iterations=config.expand_iterations,
        adapter=adapter,
        answer_style=style,
        router_max_new_tokens=config.router_max_new_tokens,
        token_budget=config.token_budget,
    )
    specs = {
        "no-retrieval": StrategySpec("no-retrieval", "none", top_k=0, answer_style=style),
        "rag-dense": StrategySpec(
            "rag-dense", "rag", retrieval_mode="dense", top_k=config.rag_top_k, answer_style=style
        ),
        "rag-hybrid": StrategySpec(
            "rag-hybrid", "rag", retrieval_mode="hybrid", top_k=config.rag_top_k, answer_style=style
        ),
        "rdr2": rdr2,
        "rdr2-base": dataclasses.replace(rdr2, name="rdr2-base", adapter=None),
        "rdr2-no-expand": dataclasses.replace(rdr2, name="rdr2-no-expand", allow_expand=False),
        "rdr2-no-refuse": dataclasses.replace(rdr2, name="rdr2-no-refuse", allow_refuse=False),
        "rdr2-no-structure": dataclasses.replace(rdr2, name="rdr2-no-structure", structure=False),
    }
    unknown = sorted(set(config.strategies) - set(specs))
    if unknown:
        raise dg.Failure(f"unknown strategies {unknown}; expected some of {list(STRATEGIES)}")
    return specs


@dg.asset(
    partitions_def=collection_partitions,
    deps=["passage_index", "questions", "router_adapter", "router_metrics"],
    group_name="evaluation",
    kinds={"python", "duckdb"},
    description="Every strategy's answers to the evaluation questions (no retrieval, retrieve-and-read "
    "dense/hybrid, RDR2 with the trained router, its ablations and test-time scaling grids), each "
    "with its evidence, cited nodes, costs and versions; replaces the collection's evaluation rows atomically.",
)
def answers(
    context: dg.AssetExecutionContext,
    config: AnswersConfig,
    catalogue: DuckDBResource,
    embedder: EmbedderResource,
    vectors: VectorStoreResource,
    llm: LLMResource,
) -> dg.MaterializeResult:
    started = time.perf_counter()
    collection = context.partition_key
    model = embedder.get()
    index = vectors.index(model)
    with catalogue.get_connection() as con:
        questions, split, note = pick_questions(con, collection, config.split)
        adapter = latest_adapter(con, collection)
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, collection).items()}
    if config.max_questions > 0:
        questions = questions[: config.max_questions]
    notes = [note] if note else []
    if adapter is not None and not (Path(adapter.path) / "adapter_config.json").is_file():
        notes.append(f"adapter {adapter.adapter_id} is gone from {adapter.path}: rdr2 routes with the base model")
        adapter = None
    if adapter is None and not any("adapter" in n for n in notes):
        notes.append("no trained router adapter: rdr2 routes with the base model (same as rdr2-base)")
    for n in notes:
        context.log.warning(n)

    style = answer_style(config.answer_style, questions)
    all_specs = strategy_specs(config, style, adapter.adapter_id if adapter else None)
    specs = {name: spec for name, spec in all_specs.items() if name in config.strategies}
    outcomes: dict[tuple[str, str, int], tuple[StrategySpec, list[AnswerOutcome]]] = {}
    engine = None
    timings: list[tuple[str, float]] = []
    if questions:
        # Grid points repeat most prompts of the main rdr2 run (greedy: same output): replayed,
        # with their seconds charged back to each strategy (core/engines/cache.py).
        engine = CachingEngine(llm.engine({adapter.adapter_id: Path(adapter.path)} if adapter else None))
        queries = [q.query for q in questions]

        def retrieve(query: str, mode: str, k: int):
            return search(index, model, query, mode=mode, k=k, collections=[collection])

        def run(spec: StrategySpec, label_suffix: str = "") -> list[AnswerOutcome]:
            t0 = time.perf_counter()
            result = run_strategy(queries, spec, retrieve=retrieve, trees=trees, engine=engine)
            label = f"{spec.name} {label_suffix}".strip()
            timings.append((label, time.perf_counter() - t0))
            context.log.info(f"{label}: {len(queries)} questions in {timings[-1][1]:.1f}s ({spec.knobs()})")
            return result

        for name, spec in specs.items():
            if name == "rdr2-base" and adapter is None and ("rdr2", "", -1) in outcomes:
                outcomes[(name, "", -1)] = (spec, outcomes[("rdr2", "", -1)][1])  # identical: reuse
                continue
            outcomes[(name, "", -1)] = (spec, run(spec))
        main = all_specs["rdr2"]
        for grid, values, field in (
            ("expand_iterations", config.expand_grid, "expand_iterations"),
            ("top_k", config.top_k_grid, "top_k"),
        ):
            for value in dict.fromkeys(values):
                spec = dataclasses.replace(main, **{field: value})
                if spec == main and ("rdr2", "", -1) in outcomes:
                    outcomes[("rdr2", grid, value)] = (spec, outcomes[("rdr2", "", -1)][1])
                else:
                    outcomes[("rdr2", grid, value)] = (spec, run(spec, f"@ {grid}={value}"))

    created = utc_now()
    records: list[AnswerRecord] = []
    with catalogue.get_connection() as con:
        index_info = index_version(index, collection) if questions else None
        for (_name, grid, value), (spec, results) in outcomes.items():
            for question, outcome in zip(questions, results):
                versions = answer_versions(
                    con,
                    collection,
                    outcome,
                    index=index_info,
                    adapter_id=spec.adapter,
                    router_model=(f"{engine.model_id}+{spec.adapter}" if spec.adapter else engine.model_id)
                    if spec.kind == "rdr2"
                    else None,
                    reader_model=engine.model_id,
                    embedder=model.model_id,
                )
                records.append(
                    build_record(
                        outcome,
                        spec,
                        collection=collection,
                        source=SOURCE,
                        versions=versions,
                        run_id=context.run.run_id,
                        qid=question.qid,
                        grid=grid,
                        grid_value=value,
                        created_at=created,
                    )
                )
        store_answers(con, records, replace=(collection, SOURCE))

    per_strategy = Counter(r.strategy if not r.grid else f"rdr2 @ {r.grid}={r.grid_value}" for r in records)
    seconds = time.perf_counter() - started
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": len(records),
            "questions": len(questions),
            "split": split,
            "answer_style": style,
            "strategies": dg.MetadataValue.md(counter_table("strategy", per_strategy)),
            "adapter_id": adapter.adapter_id if adapter else "none (base model routes)",
            "notes": dg.MetadataValue.md("\n".join(f"- {n}" for n in notes) or "none"),
            "seconds": round(seconds, 1),
            "generation_cache": (
                f"{engine.hits} replayed, {engine.misses} generated ({engine.replayed_seconds:.0f} s replayed)"
            )
            if engine
            else "unused",
            "seconds_per_strategy": dg.MetadataValue.md(
                markdown_table(["strategy run", "seconds"], [(k, round(v, 1)) for k, v in timings])
            ),
            "index": dg.MetadataValue.json(index_info or {}),
            "sample": dg.MetadataValue.md(
                markdown_table(
                    ["strategy", "question", "answer", "evidence words"],
                    [(r.strategy, r.question[:80], r.answer[:80], r.evidence_words) for r in records if not r.grid][:8],
                )
            ),
        }
    )
