"""The encoder router's own-choice rule on the packaged MiniLM: through the real routing loop
(across documents and rounds), chosen on held-out questions of a real LanceDB index, and trained,
published and reloaded with a real encoder router."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.evaluation.held_out_evidence import held_out_evidence
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import load_encoder_router, router_record, train_encoder
from rag_assets.core.routing.navigation import RetrievedDocument, RoutingKnobs, route_documents
from rag_assets.core.routing.own_choices import OwnChoices, choose_own_choices
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.scoring_router import ScoringRouter
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.routing.teachers import SimilarityThresholds
from tests.integration.tiny_index import indexed_tiny_corpus

QUERY = "How do I descale the kettle with vinegar?"
QUESTIONS = [
    Question("tea", "How hot should the water be for green tea?", answers=("80 C",)),
    Question("pharos", "When was the Pharos of Alexandria built?", answers=("280 BC",)),
    Question("tide", "How many high tides are there each day?", answers=("two high tides",)),
]
HYBRID = StrategySpec("rag-hybrid", "rag", top_k=5)
ROUTED = StrategySpec("rdr2-encoder", "rdr2", top_k=2, passages_per_query=20, expand_iterations=1, router="encoder")


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False, device="cpu")


@pytest.fixture(scope="module")
def held_out(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder):
    retrieve, nodes = indexed_tiny_corpus(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("lance"), embedder)
    return held_out_evidence(QUESTIONS, baseline=HYBRID, routed=ROUTED, retrieve=retrieve, trees=nodes)


def kettle():
    return build_tree(
        "Kettle manual",
        [
            heading("Boiling water", 1),
            paragraph("Fill the kettle up to the maximum mark of 1.7 litres."),  # 2
            paragraph("Press the switch; the light turns on while the water heats."),  # 3
            heading("Cleaning and care", 1),
            paragraph("Descale the kettle with white vinegar once a month to remove limescale."),  # 5
            paragraph("Wipe the outside with a damp cloth; never immerse the base in water."),  # 6
            heading("Safety", 1),
            paragraph("Keep the cord away from hot surfaces and children."),  # 8
        ],
    )


def lighthouse():
    return build_tree(
        "Lighthouses",
        [
            heading("History", 1),
            paragraph("The Pharos of Alexandria was built around 280 BC."),  # 2
            paragraph("It stood over 100 metres tall."),  # 3
        ],
    )


def test_own_choices_answer_within_a_margin_of_the_questions_best_node(embedder: Embedder) -> None:
    docs = [RetrievedDocument("kettle", kettle().nodes, (5,)), RetrievedDocument("pharos", lighthouse().nodes, (2,))]
    knobs = RoutingKnobs(expand_iterations=0)
    # a threshold nothing reaches: the router refuses both documents
    threshold = ScoringRouter(embedder, SimilarityThresholds(answer=2.0, expand=2.0), kind="encoder")
    assert all(d.refused for d in route_documents([QUERY], [docs], threshold, knobs).documents[0])
    # margin 0: the question's one best node; the other document's best is far below it: refused
    tight = threshold.with_own_choices(OwnChoices(margin=0.0, section_weight=0.0))
    kettle_doc, pharos_doc = route_documents([QUERY], [docs], tight, knobs).documents[0]
    assert kettle_doc.selected_node_ids == [5] and not kettle_doc.refused
    assert pharos_doc.selected_node_ids == [] and pharos_doc.refused
    # a margin wider than any cosine gap: every shown node of both documents
    loose = threshold.with_own_choices(OwnChoices(margin=2.0, section_weight=0.0))
    kettle_doc, pharos_doc = route_documents([QUERY], [docs], loose, knobs).documents[0]
    assert kettle_doc.selected_node_ids == [5, 6] and pharos_doc.selected_node_ids == [2, 3]
    # the section's best node vouches for its sibling: a heavy smoothing brings it within the margin
    alone = threshold.with_own_choices(OwnChoices(margin=0.05, section_weight=0.0))
    together = threshold.with_own_choices(OwnChoices(margin=0.05, section_weight=20.0))
    assert route_documents([QUERY], [docs], alone, knobs).documents[0][0].selected_node_ids == [5]
    assert route_documents([QUERY], [docs], together, knobs).documents[0][0].selected_node_ids == [5, 6]
    # the threshold router is unchanged by its twins
    assert threshold.own_choices is None and tight.thresholds == threshold.thresholds


def test_the_questions_best_node_carries_over_to_later_rounds(embedder: Embedder) -> None:
    docs = [RetrievedDocument("kettle", kettle().nodes, (5,))]
    # every collapsed heading is expanded in round 2 ("Boiling water", "Safety"), whose own best
    # nodes score below the descaling paragraph answered in round 1: a margin of 0 answers none
    expand_all = SimilarityThresholds(answer=2.0, expand=-1.0, max_expands=2)
    router = ScoringRouter(embedder, expand_all, kind="encoder").with_own_choices(OwnChoices(0.0, 0.0))
    result = route_documents([QUERY], [docs], router, RoutingKnobs(expand_iterations=1))
    [[doc]] = result.documents
    assert result.rounds_per_question == [2] and doc.selected_node_ids == [5]
    # the same router on the expanded views alone answers their own best node
    first = route_documents(["Where should the cord be kept?"], [docs], router, RoutingKnobs(expand_iterations=1))
    assert 8 in first.documents[0][0].selected_node_ids


def test_own_choices_are_chosen_on_held_out_questions_within_the_word_target(held_out, embedder: Embedder) -> None:
    assert held_out is not None and held_out.metric == "passage_hit"
    assert 0.0 < held_out.baseline <= 1.0  # retrieve-and-read finds some of the answers
    router = ScoringRouter(embedder, SimilarityThresholds(answer=2.0, expand=2.0), kind="encoder")
    calibration = choose_own_choices(router, held_out, margins=(0.0, 0.05, 2.0), section_weights=(3.0,))
    assert calibration is not None and calibration.questions == 3 and calibration.baseline == held_out.baseline
    trials = {(t.section_weight, t.margin): t for t in calibration.trials}
    # the router's own weight (0) is tried besides the ones asked for
    assert set(trials) == {(w, m) for w in (0.0, 3.0) for m in (0.0, 0.05, 2.0)}
    for weight in (0.0, 3.0):  # a wider margin answers a superset: never fewer words
        shares = [trials[weight, m].words_share for m in (0.0, 0.05, 2.0)]
        assert 0.0 < shares[0] <= shares[1] <= shares[2] <= 1.0
    # margin 2 answers every shown node of both routed documents: beyond 60% of rag-hybrid's words
    assert trials[0.0, 2.0].words_share > 0.6
    chosen = trials[calibration.chosen.section_weight, calibration.chosen.margin]
    assert chosen.words_share <= 0.6 and chosen.margin < 2.0
    assert choose_own_choices(router, None) is None  # no held-out questions: the threshold stays


def test_a_trained_encoder_publishes_and_reloads_its_own_choice_rule(held_out, embedder: Embedder, tmp_path: Path):
    tree = kettle()

    def example(query: str, hit: int, gold: int) -> RoutingExample:
        state = DocumentRouting("kettle", tree.nodes)
        view = state.light((hit,))
        return RoutingExample(query, state, view, frozenset({gold}), frozenset())

    train = [
        example("How much water fits in the kettle?", 2, 2),
        example("What does the light mean?", 2, 3),
        example("How do I get rid of limescale?", 5, 5),
        example("How should I clean the outside?", 5, 6),
    ]
    settings = EncoderSettings(
        epochs=1, batch_size=4, negatives=1, section_weights=(0.0,), node_texts=("heading_path",)
    )
    result = train_encoder(
        embedder.model_path, train, train[:2], tmp_path, settings, device="cpu", progress=False, held_out=held_out
    )
    own = result.own_choices
    assert own is not None and own.chosen is not None and own.metric == "passage_hit" and own.questions == 3
    # (section weight: the router's 0 and the 3 defaults) x the 10 default margins
    assert len(own.trials) == 4 * 10
    recorded = router_record(result.folder)["own_choices"]
    assert recorded["chosen"] == {"margin": own.chosen.margin, "section_weight": own.chosen.section_weight}
    assert len(recorded["trials"]) == 40 and recorded["word_target"] == 0.6
    assert recorded["objective"] == "best_within"
    router = load_encoder_router(result.folder)
    assert router.own_choices == own.chosen and router.thresholds == result.calibration.thresholds
