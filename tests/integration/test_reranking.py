"""The trained passage reranker for real: the packaged MiniLM fine-tuned as a bi-encoder (the default)
and as a cross-encoder for a few steps, published, loaded, and used inside ONE LanceDB hybrid
query on a tiny index."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.reranking.folders import is_passage_reranker, latest_reranker, load_passage_reranker
from rag_assets.core.index.reranking.labels import RerankGroup, held_out, is_gold_hit, is_gold_passage, rerank_groups
from rag_assets.core.index.reranking.lancedb_reranker import PassageReranker, fuse
from rag_assets.core.index.reranking.recipe import train_collection_reranker
from rag_assets.core.index.reranking.scorers import BiEncoderScorer
from rag_assets.core.index.reranking.training import RerankerSettings, calibrate_fusion, train_reranker
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex, search_text
from tests.conftest import FixedScorer

DOCS = {
    "Kettle": [
        heading("Boiling", 1),
        paragraph("Press the switch and the kettle boils the water in two minutes."),
        heading("Cleaning", 1),
        paragraph("Descale the kettle with vinegar once a month."),
    ],
    "Pond": [heading("Winter", 1), paragraph("Keep a hole in the pond ice so that gases can escape for the fish.")],
    "Bike": [heading("Tyres", 1), paragraph("Inflate bicycle tyres to the pressure printed on the sidewall.")],
    "Lamp": [heading("Bulbs", 1), paragraph("Replace the lamp bulb only when the lamp is cold and unplugged.")],
}
QUESTIONS = [
    Question("q1", "How long does the kettle take to boil?", answers=("two minutes",), gold_doc="Kettle"),
    Question("q2", "What keeps the fish alive under ice?", answers=("hole",), gold_doc="Pond"),
    Question("q3", "Where is the tyre pressure written?", answers=("sidewall",), gold_doc="Bike"),
    Question("q4", "When can I change the bulb?", answers=("cold",), gold_doc="Lamp"),
    Question("q5", "How do I descale it?", section_path=("Cleaning",), gold_doc="Kettle"),
]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False)


@pytest.fixture(scope="module")
def passages() -> list:
    out = []
    for title, blocks in DOCS.items():
        tree = build_tree(title, blocks)
        out += cut_passages(f"c/{title.lower()}.md", tree.nodes, tree.text)
    return out


def test_gold_labels_follow_the_finest_label(passages: list) -> None:
    kettle = [p for p in passages if p.doc_id == "c/kettle.md"]
    boiling = next(p for p in kettle if "Boiling" in p.heading_path)
    cleaning = next(p for p in kettle if "Cleaning" in p.heading_path)
    assert is_gold_passage(QUESTIONS[0], boiling) and not is_gold_passage(QUESTIONS[0], cleaning)
    assert is_gold_passage(QUESTIONS[4], cleaning) and not is_gold_passage(QUESTIONS[4], boiling)
    assert not is_gold_passage(QUESTIONS[1], boiling)
    # a doc key (file stem) names the document as well as its title does
    assert is_gold_hit(Question("k", "?", gold_doc="kettle"), "c/kettle.md", ("Kettle",))


def test_fusion_weight_zero_keeps_the_first_stage_and_negative_is_the_cross_encoder_alone() -> None:
    first, cross = [0.3, 0.2, 0.1], [0.0, 5.0, 1.0]
    assert sorted(range(3), key=lambda i: -fuse(first, cross, 0.0)[i]) == [0, 1, 2]
    assert sorted(range(3), key=lambda i: -fuse(first, cross, -1.0)[i]) == [1, 2, 0]


@pytest.mark.parametrize("model", ["bi-encoder", "cross-encoder"])
def test_train_publish_and_rerank_inside_one_lancedb_hybrid_query(
    tmp_path: Path, embedder: Embedder, passages: list, model: str
) -> None:
    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(passages, "c")

    def candidates(query: str) -> list[str]:
        return [h.passage_id for h in search(index, embedder, query, mode="hybrid", k=6, collections=["c"])]

    groups = rerank_groups(QUESTIONS[:4], passages, candidates, negatives=2)
    assert len(groups) == 4 and all(len(g.negatives) == 2 and g.positive not in g.negatives for g in groups)
    held = []
    for q in QUESTIONS[4:]:
        hits = search(index, embedder, q.query, mode="hybrid", k=6, collections=["c"])
        held.append(
            (
                q.query,
                [h.score for h in hits],
                [search_text(h.heading_path, h.text) for h in hits],
                [is_gold_passage(q, h) for h in hits],
            )
        )
    settings = RerankerSettings(model=model, max_steps=2, batch_size=2, negatives=2, max_length=64, depth=4)
    result = train_reranker(
        embedder.model_path,
        groups,
        held,
        tmp_path / "rerankers",
        settings,
        progress=False,
        extra_record={"collection": "c"},
    )
    assert result.steps == 2 and len(result.losses) == 2 and result.reranker_id.startswith("rr-")
    assert is_passage_reranker(result.folder) and latest_reranker(tmp_path / "rerankers", "c") == result.folder
    assert set(result.calibration) == {"0.0", "0.5", "1.0", "2.0", "4.0", "-1.0"}

    reranker = load_passage_reranker(result.folder, weight=-1.0)
    assert isinstance(reranker, PassageReranker) and reranker.reranker_id == result.reranker_id
    assert reranker.scorer.model_kind == model
    for mode in ("hybrid", "dense"):
        hits = search(index, embedder, "kettle boiling time", mode=mode, k=3, collections=["c"], reranker=reranker)
        assert [h.rank for h in hits] == [1, 2, 3]
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
    # fusion weight 0 is exactly the hybrid search without a reranker, though it fetched deeper
    first_stage = load_passage_reranker(result.folder, weight=0.0)
    for query in ("kettle boiling time", "fish under the ice", "bulb"):
        plain = search(index, embedder, query, mode="hybrid", k=2, collections=["c"])
        fused = search(index, embedder, query, mode="hybrid", k=2, collections=["c"], reranker=first_stage)
        assert [h.passage_id for h in fused] == [h.passage_id for h in plain], query
    # with the model alone the order is the model's own ranking of the candidates
    hits = search(index, embedder, "kettle boiling time", mode="hybrid", k=3, collections=["c"], reranker=reranker)
    texts = [search_text(h.heading_path, h.text) for h in hits]
    own = reranker.scores("kettle boiling time", texts)
    assert own == sorted(own, reverse=True)


def test_few_labelled_questions_are_topped_up_with_held_out_synthetic_ones(
    tmp_path: Path, embedder: Embedder, passages: list
) -> None:
    """The whole recipe the asset runs: with one labelled question held out, held-out synthetic
    questions bring calibration to `min_validation`; none of them is trained on."""
    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(passages, "c")
    synthetic = [
        Question(f"s{i}", text, gold_doc=title)
        for i, (title, text) in enumerate(
            [(t, f"{t.lower()} {word}") for t in DOCS for word in ("care", "use", "parts", "safety", "manual")]
        )
    ]
    labelled_held = held_out(QUESTIONS, 0.5)[1]
    synthetic_held = held_out(synthetic, 0.5)[1]
    assert labelled_held and len(synthetic_held) >= 3
    wanted = len(labelled_held) + 3
    settings = RerankerSettings(
        max_steps=1, batch_size=2, negatives=1, max_length=48, depth=4, validation_fraction=0.5, min_validation=wanted
    )

    def hits(query: str):
        return search(index, embedder, query, mode="hybrid", k=4, collections=["c"])

    result = train_collection_reranker(
        embedder.model_path, passages, QUESTIONS, synthetic, hits, tmp_path / "rr", settings
    )
    assert result is not None
    assert result.calibrated_on == wanted and result.details["calibrated_on_synthetic"] == 3
    # the three synthetic questions that calibrate made no training group; the others did
    assert result.details["groups_synthetic"] == len(synthetic) - 3
    # without the top-up only the labelled held-out questions calibrate
    settings.min_validation = 0
    result = train_collection_reranker(
        embedder.model_path, passages, QUESTIONS, synthetic, hits, tmp_path / "rr", settings
    )
    assert result.calibrated_on == len(labelled_held) and result.details["calibrated_on_synthetic"] == 0
    assert result.details["synthetic_out_of_scope"] == 0  # the labelled questions ask about every document
    # labelled questions about the kettle only: synthetic questions about the other documents are
    # left out, unless the scope is "all"
    kettle = [q for q in QUESTIONS if q.gold_doc == "Kettle"]
    result = train_collection_reranker(
        embedder.model_path, passages, kettle, synthetic, hits, tmp_path / "rr", settings
    )
    assert result.details["synthetic_out_of_scope"] == 15 and result.details["groups_synthetic"] <= 5
    settings.synthetic_scope = "all"
    result = train_collection_reranker(
        embedder.model_path, passages, kettle, synthetic, hits, tmp_path / "rr", settings
    )
    assert result.details["synthetic_out_of_scope"] == 0
    settings.synthetic_scope = "some"
    with pytest.raises(ValueError, match="synthetic_scope"):
        train_collection_reranker(embedder.model_path, passages, kettle, synthetic, hits, tmp_path / "rr", settings)


def test_calibration_ties_go_to_the_weight_that_ranks_the_gold_higher_then_to_the_first_stage() -> None:
    texts = [f"p{i}" for i in range(6)]
    first_stage = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    # the gold is 5th in the first stage and 1st for the model: every weight keeps it in the top 5
    model_first = PassageReranker(FixedScorer(lambda t: 1.0 if t == "p4" else 0.0), depth=6)
    held = [("q", first_stage, texts, [t == "p4" for t in texts])]
    weight, table = calibrate_fusion(model_first, held)
    assert set(table.values()) == {1.0} and weight == -1.0
    # a model with no opinion: every weight ranks alike, and the first stage is kept
    flat = PassageReranker(FixedScorer(lambda t: 0.0), depth=6)
    assert calibrate_fusion(flat, held)[0] == 0.0


def test_no_training_group_is_a_clear_error(tmp_path: Path, embedder: Embedder) -> None:
    with pytest.raises(ValueError, match="no reranker training groups"):
        train_reranker(embedder.model_path, [], [], tmp_path / "r", RerankerSettings(max_steps=1), progress=False)


def test_training_moves_the_listwise_loss_off_chance_and_ranks_the_gold_first(
    tmp_path: Path, embedder: Embedder, passages: list
) -> None:
    """The loss must leave ln(1 + negatives) within a CPU's few steps. It used not to: the head
    reads the checkpoint's untrained pooler, so the logits stayed within about +-0.1 and the loss
    near chance (1.29 after these 12 steps) though the gold passage already ranked first."""
    groups = rerank_groups(QUESTIONS, passages, lambda query: [], negatives=3)
    assert len(groups) == 5
    settings = RerankerSettings(
        model="cross-encoder", max_steps=12, batch_size=5, negatives=3, max_length=64, learning_rate=4e-5
    )
    result = train_reranker(embedder.model_path, groups, [], tmp_path, settings, progress=False)
    chance = math.log(1 + settings.negatives)
    assert sum(result.losses[-3:]) / 3 < 0.5 * chance, result.losses
    assert abs(result.losses[0] - chance) < 1e-3  # a zero head: every passage scores alike at first
    reranker = load_passage_reranker(result.folder)
    for group in groups:
        scores = reranker.scores(group.query, [group.positive, *group.negatives])
        assert scores[0] == max(scores), (group.query, scores)


def test_building_the_cross_encoder_from_the_bi_encoder_prints_no_load_report(
    embedder: Embedder, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """A first run's screen: the new classifier head is expected (we train it), so neither the
    transformers LOAD REPORT nor the conversion warning may reach the user; the library log
    levels are restored afterwards."""
    import logging

    from rag_assets.core.index.reranking.scorers import load_cross_encoder

    before = logging.getLogger("sentence_transformers").level
    model = load_cross_encoder(embedder.model_path, device="cpu", max_length=64, num_labels=1)
    out, err = capfd.readouterr()
    assert model.model.classifier.out_features == 1
    assert "LOAD REPORT" not in out + err and "MISSING" not in out + err
    assert not [r for r in caplog.records if r.levelno < logging.ERROR and "CrossEncoder" in r.getMessage()]
    assert logging.getLogger("sentence_transformers").level == before


# Groups whose negatives are nobody's positive: with the tiny corpus's groups every negative is
# another group's positive, so in-batch negatives repeat the positive and the loss cannot move.
DISTINCT_GROUPS = [
    RerankGroup(
        "How long does the kettle take to boil?",
        "Kettle > Boiling\nPress the switch and the kettle boils the water in two minutes.",
        (
            "Kettle > Safety\nNever fill the kettle above the maximum mark.",
            "Kettle > Cord\nWind the cord around the base after use.",
            "Kettle > Lid\nOpen the lid with the button on the handle.",
        ),
    ),
    RerankGroup(
        "What keeps the fish alive under ice?",
        "Pond > Winter\nKeep a hole in the pond ice so that gases can escape for the fish.",
        (
            "Pond > Summer\nTop the pond up with rain water when it is hot.",
            "Pond > Plants\nWater lilies shade the fish from the sun.",
            "Pond > Pump\nClean the pump filter every spring.",
        ),
    ),
    RerankGroup(
        "Where is the tyre pressure written?",
        "Bike > Tyres\nInflate bicycle tyres to the pressure printed on the sidewall.",
        (
            "Bike > Chain\nOil the chain after riding in the rain.",
            "Bike > Brakes\nReplace brake pads when the grooves are gone.",
            "Bike > Saddle\nSet the saddle height to your hip.",
        ),
    ),
    RerankGroup(
        "When can I change the bulb?",
        "Lamp > Bulbs\nReplace the lamp bulb only when the lamp is cold and unplugged.",
        (
            "Lamp > Shade\nDust the shade with a dry cloth.",
            "Lamp > Switch\nThe switch has three brightness levels.",
            "Lamp > Base\nThe base holds a weight so that the lamp stands firm.",
        ),
    ),
]


def test_the_bi_encoder_learns_the_groups_and_old_cross_encoder_folders_still_load(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The default model: contrastive fine-tuning of the packaged encoder widens the gap between
    each gold passage and its best negative (against the untrained encoder, which already ranks
    these right) and keeps every gold first; a folder published before the bi-encoder existed
    (its record names no model) is read as the cross-encoder it holds."""
    import json

    from sentence_transformers import SentenceTransformer

    def margin(scorer) -> float:
        gaps = []
        for group in DISTINCT_GROUPS:
            scores = scorer.scores(group.query, [group.positive, *group.negatives])
            gaps.append(scores[0] - max(scores[1:]))
        return sum(gaps) / len(gaps)

    untrained = BiEncoderScorer(SentenceTransformer(str(embedder.model_path), local_files_only=True))
    settings = RerankerSettings(max_steps=4, batch_size=4, negatives=3, max_length=64)
    result = train_reranker(embedder.model_path, DISTINCT_GROUPS, [], tmp_path / "bi", settings, progress=False)
    assert result.steps == 4 and all(math.isfinite(loss) for loss in result.losses)
    reranker = load_passage_reranker(result.folder)
    assert reranker.scorer.model_kind == "bi-encoder" and "bi-encoder" in str(reranker)
    assert margin(reranker.scorer) > margin(untrained) + 0.05, (margin(reranker.scorer), margin(untrained))
    for group in DISTINCT_GROUPS:
        scores = reranker.scores(group.query, [group.positive, *group.negatives])
        assert scores[0] == max(scores), (group.query, scores)

    old = train_reranker(
        embedder.model_path,
        DISTINCT_GROUPS,
        [],
        tmp_path / "cross",
        RerankerSettings(model="cross-encoder", max_steps=1, batch_size=4, negatives=3, max_length=64),
        progress=False,
    )
    record_path = old.folder / "reranker.json"
    record = json.loads(record_path.read_text())
    del record["model"]
    record_path.write_text(json.dumps(record))
    assert load_passage_reranker(old.folder).scorer.model_kind == "cross-encoder"


def test_an_unknown_reranker_model_is_a_clear_error(tmp_path: Path, embedder: Embedder, passages: list) -> None:
    groups = rerank_groups(QUESTIONS, passages, lambda query: [], negatives=1)
    with pytest.raises(ValueError, match="'colbert' is not one of bi-encoder, cross-encoder"):
        train_reranker(embedder.model_path, groups, [], tmp_path, RerankerSettings(model="colbert"), progress=False)


def test_the_bi_encoder_cache_is_cleared_when_full_and_scores_stay_the_same(embedder: Embedder) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(embedder.model_path), local_files_only=True)
    unbounded, bounded = BiEncoderScorer(model), BiEncoderScorer(model, cache_size=3)
    texts = [g.positive for g in DISTINCT_GROUPS] + [n for g in DISTINCT_GROUPS for n in g.negatives][:2]
    for query in ("kettle boiling time", "pond ice"):
        first = bounded.scores(query, texts[:2])
        again = bounded.scores(query, texts)  # more than the cache holds: cleared, then scored in full
        assert len(bounded._vectors) <= len(texts)
        assert again == pytest.approx(unbounded.scores(query, texts), abs=1e-5)
        assert first == pytest.approx(again[:2], abs=1e-5)
