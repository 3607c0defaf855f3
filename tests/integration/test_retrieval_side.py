"""The retrieval-side pieces for real on a tiny corpus: query rewriting through the real SmolLM2,
the namespace router over a two-collection LanceDB index, evidence reordering and the R4 position
policy trained with the real reader's reward, and the `rag`/`dota` strategies using them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rag_assets.core.answering.r4_reordering import (
    EvidenceItem,
    ReaderScorer,
    ReorderExample,
    ReorderSettings,
    edges_order,
    load_position_policy,
    reorder,
    train_position_policy,
)
from rag_assets.core.answering.reader_prompts import number_blocks, reader_messages
from rag_assets.core.answering.rewriting import clean_rewrite, rewrite_queries
from rag_assets.core.answering.strategies import gather_evidence
from rag_assets.core.answering.strategy_runner import run_strategy
from rag_assets.core.answering.types import RetrievalExtras, StrategySpec
from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.engines.transformers_engine import TransformersEngine
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.namespace_routing import (
    QueryNamespaces,
    load_namespace_router,
    publish_namespace_router,
    routing_quality,
    train_namespace_router,
)
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.reranking.lancedb_reranker import PassageReranker
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex
from rag_assets.core.routing.scoring_router import HitNodesRouter
from tests.conftest import FixedScorer

KITCHEN = {
    "Kettle": [heading("Boiling", 1), paragraph("Press the switch and the kettle boils the water in two minutes.")],
    "Toaster": [heading("Crumbs", 1), paragraph("Empty the toaster crumb tray every week to avoid burning smells.")],
    "Oven": [heading("Preheat", 1), paragraph("Preheat the oven to 180 degrees before baking the bread.")],
}
GARDEN = {
    "Pond": [heading("Winter", 1), paragraph("Keep a hole in the pond ice so that gases can escape for the fish.")],
    "Roses": [heading("Pruning", 1), paragraph("Prune roses in early spring just above an outward facing bud.")],
    "Lawn": [heading("Mowing", 1), paragraph("Mow the lawn weekly in summer and never cut more than a third.")],
}


def _passages(collection: str, docs: dict) -> list:
    out = []
    for title, blocks in docs.items():
        tree = build_tree(title, blocks)
        out += cut_passages(f"{collection}/{title.lower()}", tree.nodes, tree.text)
    return out


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> PassageIndex:
    index = PassageIndex(tmp_path_factory.mktemp("lance"), embedder)
    index.sync(_passages("kitchen", KITCHEN), "kitchen")
    index.sync(_passages("garden", GARDEN), "garden")
    return index


@pytest.fixture(scope="module")
def engine(smollm2_checkpoint: Path) -> TransformersEngine:
    return TransformersEngine(smollm2_checkpoint, device="cpu", batch_size=8)


def test_a_rewrite_that_drifts_off_falls_back_to_the_question() -> None:
    question = "How long does the kettle take to boil?"
    assert clean_rewrite(question, "Search query: kettle boil time\nmore") == "kettle boil time"
    assert clean_rewrite(question, "") is None
    assert clean_rewrite(question, "I'm sorry, I cannot help with that kettle") is None
    assert clean_rewrite(question, "photosynthesis in plants") is None  # no word of the question


def test_rewrite_through_the_real_small_model_is_batched_and_usable(
    engine: TransformersEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    batches: list[int] = []
    generate = engine.generate

    def counted(chats, **kwargs):
        batches.append(len(chats))
        return generate(chats, **kwargs)

    monkeypatch.setattr(engine, "generate", counted)
    questions = ["How long does the kettle take to boil?", "Why keep a hole in the pond ice in winter?"]
    rewrites = rewrite_queries(engine, questions, max_new_tokens=16)
    assert batches == [2]  # both questions in one engine call
    assert [r.original for r in rewrites] == questions
    # SmolLM2-135M, greedy on CPU: one line each, so the query is the model's output as generated
    assert [(r.query, r.raw, r.kept_original) for r in rewrites] == [
        ("The kettle takes 2 minutes to boil.", "The kettle takes 2 minutes to boil.", False),
        # drifted into an answer's opening, yet kept: it shares "the" with the question
        ("The answer to this question is:", "The answer to this question is:", False),
    ]
    assert all(r.output_tokens > 0 and r.prompt_tokens > 0 for r in rewrites)


def test_namespace_router_trains_routes_and_round_trips(tmp_path: Path, index: PassageIndex, embedder) -> None:
    pseudo = {
        "kitchen": ["kettle water boiling", "toaster crumbs tray", "oven preheat baking"],
        "garden": ["pond ice fish", "pruning roses spring", "mowing the lawn"],
    }
    router, grid = train_namespace_router(index, pseudo, target_accuracy=1.0)
    assert router.namespaces == ["garden", "kitchen"] and len(router.owners) == 6
    assert grid and router.margin in {float(m) for m in grid}
    questions = ["How long does the kettle take to boil?", "When should I prune my roses?"]
    routed = QueryNamespaces(router, embedder).route(questions)
    assert routed[0][0] == "kitchen" and routed[1][0] == "garden"
    quality = routing_quality(router, routed, ["kitchen", "garden"])
    assert quality.accuracy == 1.0 and 0 < quality.share_searched <= 1.0
    # the narrowest margin searches one namespace: half of this index
    assert router.route_scored(router.scores(embedder.encode(questions)), 0.0) == [["kitchen"], ["garden"]]
    assert router.share(["kitchen"]) == pytest.approx(0.5)
    folder = publish_namespace_router(router, tmp_path / "ns")
    loaded = load_namespace_router(folder)
    assert loaded.router_id == router.router_id and loaded.margin == router.margin
    assert np.allclose(loaded.centroids, router.centroids)


def test_reorder_modes() -> None:
    items = [EvidenceItem(f"passage {i}", 1.0 - i / 10, i + 1) for i in range(5)]
    assert reorder("retrieval", "q", items) == [0, 1, 2, 3, 4]
    assert reorder("reverse", "q", items) == [4, 3, 2, 1, 0]
    assert reorder("edges", "q", items) == edges_order(5) == [0, 2, 4, 3, 1]
    with pytest.raises(ValueError, match="needs a trained position policy"):
        reorder("learned", "q", items)
    with pytest.raises(ValueError, match="reorder must be one of"):
        StrategySpec("x", "rag", reorder="sideways")


def test_position_policy_learns_from_the_real_reader_reward(tmp_path: Path, smollm2_checkpoint: Path) -> None:
    scorer = ReaderScorer(smollm2_checkpoint, max_length=256, batch_size=8)
    gold = EvidenceItem("The kettle boils the water in two minutes.", 0.5, 2, heading_path=("Kettle", "Boiling"))
    noise = [EvidenceItem(t, 0.9 - i / 10, i + 1) for i, t in enumerate(["Prune roses in spring.", "Mow weekly."])]
    examples = [
        ReorderExample("How long does the kettle take to boil?", (noise[0], gold, noise[1]), "two minutes"),
        ReorderExample("What boils the water?", (gold, *noise), "the kettle"),
    ]

    def render(query: str, items) -> list[dict[str, str]]:
        return reader_messages(query, number_blocks([(i.heading_path, i.text) for i in items]), "short")

    # the reward is the real reader's log-likelihood: the gold answer is likelier with its evidence
    with_gold, without = scorer.log_likelihoods(
        [(render(examples[0].query, [gold]), "two minutes"), (render(examples[0].query, noise), "two minutes")]
    )
    assert with_gold > without
    result = train_position_policy(
        examples, scorer.log_likelihoods, render, tmp_path / "r4", ReorderSettings(epochs=1, samples=2, batch_size=2)
    )
    assert result.steps == 1 and len(result.rewards) == 1 and result.examples == 2
    assert set(result.reward_by_order) == {"retrieval", "edges", "learned"}
    policy = load_position_policy(result.folder)
    assert policy.policy_id == result.policy_id and np.allclose(policy.weights, result.policy.weights)
    assert sorted(policy.order(examples[0].query, examples[0].items)) == [0, 1, 2]


def test_position_policy_learns_to_place_the_gold_passage_where_the_reward_wants_it(tmp_path: Path) -> None:
    """REINFORCE must move the policy, not just run: with a reward that pays only when the passage
    answering the question is read last, the trained policy puts it last on questions it never saw,
    wherever retrieval ranked it, and beats the retrieval order. (The reward here is a rule instead
    of the reader, whose signal one CPU step cannot learn from; the test above checks that signal.)"""
    facts = {
        "kettle": "The kettle boils the water in two minutes.",
        "toaster": "Empty the toaster crumb tray every week.",
        "oven": "Preheat the oven to 180 degrees before baking.",
        "roses": "Prune roses in early spring above a bud.",
        "lawn": "Mow the lawn weekly and never cut a third.",
        "pond": "Keep a hole in the pond ice for the fish.",
    }
    noise = ["Opening hours are listed on the back page.", "The warranty card is in the box."]

    def example(topic: str, gold_rank: int) -> ReorderExample:
        texts = list(noise)
        texts.insert(gold_rank, facts[topic])
        items = tuple(EvidenceItem(t, 0.9 - r / 10, r + 1) for r, t in enumerate(texts))
        return ReorderExample(f"What about the {topic} {facts[topic].split()[2]}?", items, facts[topic])

    def render(query: str, items) -> list[dict[str, str]]:
        return [{"role": "user", "content": "\n".join(i.text for i in items)}]

    def reward(chats) -> list[float]:
        return [1.0 if messages[0]["content"].endswith(gold) else 0.0 for messages, gold in chats]

    train = [example(t, r) for t, r in [("kettle", 0), ("toaster", 1), ("oven", 2), ("roses", 0)]]
    result = train_position_policy(
        train, reward, render, tmp_path / "r4", ReorderSettings(epochs=60, samples=8, batch_size=4, learning_rate=0.3)
    )
    assert result.reward_by_order["learned"] == 1.0
    assert result.reward_by_order["retrieval"] == 0.25  # the gold is last in one of the four by chance
    policy = load_position_policy(result.folder)
    for topic, rank in [("lawn", 0), ("pond", 1), ("lawn", 2)]:
        unseen = example(topic, rank)
        order = policy.order(unseen.query, unseen.items)
        assert order[-1] == rank, f"{topic} (retrieved at rank {rank + 1}) placed at {order.index(rank) + 1} of 3"
        assert sorted(order) == [0, 1, 2]


def test_rag_and_dota_strategies_use_the_knobs(index: PassageIndex, embedder, engine: TransformersEngine) -> None:
    router, _ = train_namespace_router(index, {"kitchen": ["kettle"], "garden": ["pond"]}, target_accuracy=1.0)
    calls: list[dict] = []

    def retrieve(query: str, mode: str, k: int, **options):
        calls.append(options)
        return search(index, embedder, query, mode=mode, k=k, collections=options.get("collections"))

    question = ["How long does the kettle take to boil?"]
    edges = StrategySpec("rag-hybrid-edges", "rag", top_k=3, reorder="edges")
    plain = StrategySpec("rag-hybrid", "rag", top_k=3)
    first = gather_evidence(question, plain, retrieve=retrieve, trees={})[0]
    moved = gather_evidence(question, edges, retrieve=retrieve, trees={})[0]
    assert moved.retrieval["order"] == [1, 3, 2] and moved.passage_ids == [first.passage_ids[i] for i in (0, 2, 1)]

    dota = StrategySpec(
        "dota", "dota", top_k=3, rewrite=True, route_namespaces=True, aggregate_words=15, reader_max_new_tokens=8
    )
    extras = RetrievalExtras(namespaces=QueryNamespaces(router, embedder))
    outcome = run_strategy(question, dota, retrieve=retrieve, trees={}, engine=engine, extras=extras)[0]
    info = outcome.retrieval
    assert info["original_query"] == question[0] and info["retrieval_query"].strip()
    assert "kitchen" in info["namespaces"] and 0 < info["share_searched"] <= 1
    assert calls[-1]["collections"] == info["namespaces"]
    assert len(outcome.passage_ids) == 1  # each passage is ~13 words: only the first fits 15
    assert outcome.engine_calls == 2 and outcome.router_output_tokens > 0  # the rewrite, then the reader
    assert dota.knobs()["rewrite"] and dota.knobs()["aggregate_words"] == 15 and "reorder" not in dota.knobs()


def test_rdr2_with_rerank_routes_the_documents_the_reranker_puts_first(index: PassageIndex, embedder) -> None:
    trees = {f"kitchen/{title.lower()}": build_tree(title, blocks).nodes for title, blocks in KITCHEN.items()}
    # the model's order alone, and a model that puts the toaster first whatever the question
    toaster_first = PassageReranker(FixedScorer(lambda text: "toaster" in text.lower()), weight=-1.0, depth=10)
    calls: list[dict] = []

    def retrieve(query: str, mode: str, k: int, *, rerank: bool = False):
        calls.append({"k": k, "rerank": rerank})
        reranker = toaster_first if rerank else None
        return search(index, embedder, query, mode=mode, k=k, collections=["kitchen"], reranker=reranker)

    question = ["How long does the kettle take to boil?"]
    spec = StrategySpec(
        "rdr2-hit-nodes", "rdr2", top_k=1, passages_per_query=3, expand_iterations=0, router="hit-nodes"
    )
    routers = {"hit-nodes": HitNodesRouter()}
    plain = gather_evidence(question, spec, retrieve=retrieve, trees=trees, routers=routers)[0]
    reranked = gather_evidence(
        question, dataclasses.replace(spec, rerank=True), retrieve=retrieve, trees=trees, routers=routers
    )[0]
    assert calls == [{"k": 3, "rerank": False}, {"k": 3, "rerank": True}]
    assert plain.retrieved_doc_ids == ["kitchen/kettle"] and "two minutes" in plain.evidence
    assert reranked.retrieved_doc_ids == ["kitchen/toaster"] and "crumb tray" in reranked.evidence
    assert reranked.retrieval["search_seconds"] >= 0 and "search_seconds" not in plain.retrieval


def test_the_report_reads_the_retrieval_lineage_back() -> None:
    from dataclasses import dataclass

    from rag_assets.core.evaluation.retrieval_report import retrieval_notes

    @dataclass
    class Row:
        strategy: str
        grid: str
        collection: str
        versions_dict: dict

    dota = {"kept_original": False, "namespaces": ["a"], "share_searched": 0.4, "search_seconds": 0.02}
    rows = [
        Row("dota", "", "a", {"retrieval": dota}),
        Row("dota", "", "b", {"retrieval": {**dota, "kept_original": True}}),
        Row("rag-hybrid", "", "a", {}),
        Row("rdr2", "", "a", {"retrieval": {"budget_filled": [["doc", 3], ["doc", 7], ["other", 2]]}}),
        Row("rdr2", "", "a", {"retrieval": {"budget_filled": [["doc", 4]]}}),
    ]
    assert retrieval_notes(rows) == [
        "dota: rewrite used for 1/2 questions (the rest searched the question); namespace accuracy 0.500, "
        "40.0% of the index searched; search 20 ms per question",
        "rdr2: the evidence budget's fill added 2.0 scored nodes to the router's own ANSWERs in 2 answers",
    ]
