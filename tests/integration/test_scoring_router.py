"""The non-generative router kinds through the real routing loop: hit-nodes floor, oracle ceiling,
the similarity router on the packaged MiniLM, a tiny encoder router trained and reloaded for real,
and the per-question evidence budget."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import CONTENT, build_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import (
    encoder_pairs,
    is_encoder_router,
    load_encoder_router,
    router_record,
    train_encoder,
)
from rag_assets.core.routing.navigation import RetrievedDocument, RoutingKnobs, route_documents
from rag_assets.core.routing.routed_evidence import fill_scores, heading_words, node_words, render_evidence
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.scoring_router import (
    ANCESTOR_LEVELS,
    HitNodesRouter,
    OracleRouter,
    ScoringRouter,
    content_context,
    heading_context,
    section_smoothed,
)
from rag_assets.core.routing.scoring_settings import (
    CHOSEN_FILL_ORDERS,
    NODE_TEXTS,
    ScoringChoice,
    SectionWeightTrial,
    budget_recall,
    calibrate,
    choose_scoring_settings,
    chosen_trial,
)
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView
from rag_assets.core.routing.teachers import SimilarityScores, SimilarityThresholds


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False, device="cpu")


def manual():
    return build_tree(
        "Kettle manual",
        [
            heading("Boiling water", 1),
            paragraph("Fill the kettle up to the maximum mark of 1.7 litres."),
            paragraph("Press the switch; the light turns on while the water heats."),
            heading("Cleaning and care", 1),
            paragraph("Descale the kettle with white vinegar once a month to remove limescale."),
            paragraph("Wipe the outside with a damp cloth; never immerse the base in water."),
            heading("Safety", 1),
            paragraph("Keep the cord away from hot surfaces and children."),
        ],
    )


def test_contexts_carry_the_heading_path_and_a_glimpse() -> None:
    tree = manual()
    state = DocumentRouting("kettle", tree.nodes)
    assert (
        content_context(tree.nodes, 2)
        == "Kettle manual > Boiling water: Fill the kettle up to the maximum mark of 1.7 litres."
    )
    assert heading_context(state, 4).startswith("Kettle manual > Cleaning and care: Descale the kettle")


def test_section_smoothing_lifts_the_siblings_of_a_sections_best_node() -> None:
    section = {2: 1, 3: 1, 5: 4, 6: 4}
    scores = {2: 0.9, 3: 0.1, 5: 0.3, 6: 0.2}
    assert section_smoothed(scores, section, 0.0) == scores
    smoothed = section_smoothed(scores, section, 1.0)
    assert smoothed == pytest.approx({2: 0.9, 3: 0.5, 5: 0.3, 6: 0.25})
    # Node 3 alone ranked last; next to the section's best node it now outranks the other section.
    assert sorted(smoothed, key=smoothed.get, reverse=True) == [2, 3, 5, 6]
    assert max(smoothed.values()) <= max(scores.values())  # still on the cosine scale
    with pytest.raises(ValueError, match="section_weight"):
        ScoringRouter(Embedder.__new__(Embedder), SimilarityThresholds(), section_weight=-1)


def test_budget_recall_pools_a_questions_views_and_counts_words() -> None:
    tree = manual()  # words with their number: node 2: 12, 3: 12, 5: 13, 6: 14, 8: 10
    state = DocumentRouting("kettle", tree.nodes)
    content = frozenset({2, 3, 5, 6, 8})
    view = SubtreeView("kettle", state.title, tree.nodes, content, frozenset())
    q1 = RoutingExample("q1", state, view, frozenset({5, 6}), frozenset())
    q2 = RoutingExample("q2", state, view, frozenset(), frozenset())  # a refusal: no gold to keep
    scores = SimilarityScores({2: 0.9, 5: 0.8, 6: 0.1, 3: 0.0, 8: 0.0}, {})
    # 30 words hold nodes 2 and 5 (12 + 13): one of the two gold nodes.
    assert budget_recall([scores, scores], [q1, q2], 30) == (0.5, 1)
    # A second view of the same question adds its scores to the pool (the best one counts).
    later = SimilarityScores({6: 0.95, 5: 0.92}, {})
    assert budget_recall([scores, later], [q1, q1], 30) == (1.0, 1)
    assert budget_recall([scores], [q2], 30) is None


def test_hit_nodes_router_answers_exactly_the_retrieved_nodes() -> None:
    tree = manual()
    docs = [RetrievedDocument("kettle", tree.nodes, (3,))]
    result = route_documents(["q"], [docs], HitNodesRouter(), RoutingKnobs(expand_iterations=2))
    [[routed]] = result.documents
    assert routed.selected_node_ids == [3] and not routed.refused and result.engine_calls_per_round == [1]
    assert result.prompt_tokens == [0]  # no model read anything


def test_oracle_router_expands_to_the_gold_then_answers() -> None:
    tree = manual()
    question = Question("q", "How do I remove limescale?", answers=("white vinegar",))
    docs = [RetrievedDocument("kettle", tree.nodes, (2,))]  # retrieval lit the wrong section
    result = route_documents([question.query], [docs], OracleRouter([question]), RoutingKnobs(expand_iterations=1))
    [[routed]] = result.documents
    assert routed.selected_node_ids == [5] and len(result.engine_calls_per_round) == 2
    # Without an expand round the oracle can only refuse this document.
    refused = route_documents([question.query], [docs], OracleRouter([question]), RoutingKnobs(expand_iterations=0))
    assert refused.documents[0][0].refused and refused.documents[0][0].selected_node_ids == []


def test_similarity_router_scores_nodes_in_context(embedder: Embedder) -> None:
    tree = manual()
    docs = [RetrievedDocument("kettle", tree.nodes, (2,))]
    router = ScoringRouter(embedder, SimilarityThresholds(answer=0.3, expand=0.3, max_answers=1), kind="similarity")
    result = route_documents(
        ["How do I descale the kettle with vinegar?"], [docs], router, RoutingKnobs(expand_iterations=1)
    )
    [[routed]] = result.documents
    assert 5 in routed.selected_node_ids  # reached by expanding "Cleaning and care"
    strict = ScoringRouter(embedder, SimilarityThresholds(answer=0.99, expand=0.99), kind="similarity")
    refused = route_documents(["How do I descale?"], [docs], strict, RoutingKnobs(expand_iterations=1))
    assert refused.documents[0][0].refused and not refused.documents[0][0].selected_node_ids
    no_refuse = route_documents(
        ["How do I descale?"], [docs], strict, RoutingKnobs(expand_iterations=0, allow_refuse=False)
    )
    assert len(no_refuse.documents[0][0].selected_node_ids) == 1  # the best shown node, never a refusal


def test_the_knobs_expand_threshold_overrides_the_calibrated_one(embedder: Embedder) -> None:
    # Only "Boiling water"'s first paragraph is lit; the descaling answer sits under the collapsed
    # "Cleaning and care", which the calibrated threshold (0.99) never opens. The ask policy's
    # learned threshold (0.3, on the knobs) opens it; the router's own thresholds are untouched.
    tree = manual()
    docs = [RetrievedDocument("kettle", tree.nodes, (2,))]
    router = ScoringRouter(embedder, SimilarityThresholds(answer=0.3, expand=0.99, max_answers=1), kind="similarity")
    query = ["How do I descale the kettle with vinegar?"]
    [[calibrated]] = route_documents(query, [docs], router, RoutingKnobs(expand_iterations=1)).documents
    assert 5 not in calibrated.selected_node_ids
    learned = RoutingKnobs(expand_iterations=1, expand_threshold=0.3)
    [[opened]] = route_documents(query, [docs], router, learned).documents
    assert 5 in opened.selected_node_ids and router.thresholds.expand == 0.99


def test_evidence_budget_keeps_the_best_scored_nodes_within_the_words(embedder: Embedder) -> None:
    tree = manual()
    docs = [RetrievedDocument("kettle", tree.nodes, (2, 5, 8))]
    router = ScoringRouter(embedder, SimilarityThresholds(answer=-1.0, expand=2.0, max_answers=8), kind="similarity")
    query = "What is the maximum amount of water in the kettle?"
    free = route_documents([query], [docs], router, RoutingKnobs(expand_iterations=0))
    assert len(free.documents[0][0].selected_node_ids) >= 3
    budget = len(render_evidence([free.documents[0][0]], {"kettle": tree.nodes}, numbered=True).split()) // 2
    cut = route_documents(
        [query],
        [docs],
        router,
        RoutingKnobs(expand_iterations=0),
        evidence_budgets=[budget],
        trees={"kettle": tree.nodes},
    )
    kept = cut.documents[0][0].selected_node_ids
    assert 2 in kept and len(kept) < len(free.documents[0][0].selected_node_ids)  # the maximum-mark node survives
    assert len(render_evidence(cut.documents[0], {"kettle": tree.nodes}, numbered=True).split()) <= budget


def test_a_budget_the_router_leaves_unused_is_filled_best_score_first(embedder: Embedder) -> None:
    tree = manual()
    trees = {"kettle": tree.nodes}
    docs = [RetrievedDocument("kettle", tree.nodes, (2, 5, 8))]
    strict = ScoringRouter(embedder, SimilarityThresholds(answer=2.0, expand=2.0), kind="similarity")
    query = "What is the maximum amount of water in the kettle?"
    knobs = RoutingKnobs(expand_iterations=0)
    [unfilled] = route_documents([query], [docs], strict, dataclasses.replace(knobs, fill_budget=False),
                                 evidence_budgets=[60], trees=trees).documents  # fmt: skip
    assert unfilled[0].refused and unfilled[0].selected_node_ids == []  # nothing above threshold
    [filled] = route_documents([query], [docs], strict, knobs, evidence_budgets=[60], trees=trees).documents
    doc = filled[0]
    # The router still refused; the words it left unused went to the nodes it scored best, and
    # lineage can tell them from its own picks.
    assert doc.refused and doc.selected_node_ids and doc.filled_node_ids == doc.selected_node_ids
    assert 2 in doc.selected_node_ids  # the maximum-mark paragraph scores best
    words = len(render_evidence(filled, trees, numbered=True).split())
    paths = {tuple(tree.nodes[n].heading_path): n for n in doc.selected_node_ids}  # one heading line each
    expected = sum(node_words(tree.nodes[n]) for n in doc.selected_node_ids)
    assert words == expected + sum(heading_words(tree.nodes[n]) for n in paths.values()) <= 60
    # Free (no budget): the router's own decision stands.
    [free] = route_documents([query], [docs], strict, knobs).documents
    assert free[0].selected_node_ids == [] and free[0].filled_node_ids == []


def test_the_budget_fill_can_follow_retrieval_or_fuse_it_with_the_router(embedder: Embedder) -> None:
    tree = manual()
    trees = {"kettle": tree.nodes}
    # Retrieval ranked the cord paragraph (8) first, the maximum mark (2) last.
    docs = [RetrievedDocument("kettle", tree.nodes, (8, 5, 2), hit_ranks=(0, 1, 2))]
    strict = ScoringRouter(embedder, SimilarityThresholds(answer=2.0, expand=2.0), kind="similarity")
    query = "What is the maximum amount of water in the kettle?"
    # room for either paragraph alone, not for both
    one_node = max(heading_words(tree.nodes[n]) + node_words(tree.nodes[n]) for n in (2, 8))

    def kept(router: ScoringRouter, order: str | None) -> list[int]:
        knobs = RoutingKnobs(expand_iterations=0, fill_order=order)
        [[doc]] = route_documents([query], [docs], router, knobs, evidence_budgets=[one_node], trees=trees).documents
        return doc.selected_node_ids

    assert kept(strict, "router") == [2]  # the encoder's best: the maximum-mark paragraph
    assert kept(strict, "retrieval") == [8]  # retrieval's best
    # The router's calibrated order applies when the knobs name none; the knobs override it.
    by_retrieval = strict.with_section_weight(0.0, fill_order="retrieval")
    assert kept(by_retrieval, None) == [8] and kept(by_retrieval, "router") == [2]
    with pytest.raises(ValueError, match="fill_order"):
        kept(strict, "random")


def test_fill_scores_rank_below_every_selection_in_the_order_asked() -> None:
    fill = {(0, 1): 0.9, (0, 2): 0.5, (0, 3): 0.4, (1, 4): 0.8}
    selected = {(0, 7): 0.6}
    ranks = {(0, 3): 0, (0, 1): 1, (1, 9): 2}  # (1, 9) is not a candidate: ignored

    def order(name: str) -> list[tuple[int, int]]:
        scores = fill_scores(fill, selected, ranks, name)
        assert max(scores.values()) < min(selected.values())  # the router's own picks come first
        return sorted(scores, key=lambda key: -scores[key])

    assert fill_scores(fill, selected, ranks, "router") == fill  # one scale with the selections
    assert order("retrieval") == [(0, 3), (0, 1), (1, 4), (0, 2)]  # retrieved first, then by score
    # Fused, 1/(60 + router rank) + 1/(60 + retrieval rank): (0, 1), first by score and second
    # retrieved, passes (0, 3), last by score and first retrieved; the rest keep the router's order.
    assert order("fused") == [(0, 1), (0, 3), (1, 4), (0, 2)]


def test_scoring_routers_see_whole_views_whatever_the_token_budget(embedder: Embedder) -> None:
    # The token budget is the LLM's context window; a scorer reads each node on its own, so a
    # tiny budget must not hide lit nodes from it (nor from the bounds measured beside it).
    tree = manual()
    docs = [RetrievedDocument("kettle", tree.nodes, (2, 5, 8))]
    lit = DocumentRouting("kettle", tree.nodes).light((2, 5, 8)).visible_content_ids
    eager = ScoringRouter(embedder, SimilarityThresholds(answer=-1.0, expand=2.0, max_answers=16), kind="similarity")
    knobs = RoutingKnobs(expand_iterations=0, token_budget=8)
    [[doc]] = route_documents(["How much water fits?"], [docs], eager, knobs).documents
    assert set(doc.selected_node_ids) == lit and len(lit) >= 3
    [[floor]] = route_documents(["How much water fits?"], [docs], HitNodesRouter(), knobs).documents
    assert set(floor.selected_node_ids) == {2, 5, 8} & lit


def test_encoder_router_trains_calibrates_publishes_and_routes(embedder: Embedder, tmp_path: Path) -> None:
    tree = manual()

    def example(query: str, hits: tuple[int, ...], gold: set[int]) -> RoutingExample:
        state = DocumentRouting("kettle", tree.nodes)
        view = state.light(hits)
        return RoutingExample(query, state, view, frozenset(gold & view.visible_content_ids),
                              frozenset(gold - view.visible_content_ids))  # fmt: skip

    train = [
        example("How much water fits in the kettle?", (2,), {2}),
        example("What does the light mean?", (2,), {3}),
        example("How do I get rid of limescale?", (5,), {5}),
        example("How should I clean the outside?", (5,), {6}),
        example("Where should the cord be?", (8,), {8}),
        example("How do I descale it?", (2,), {4}),  # collapsed "Cleaning and care": an EXPAND label
    ]
    assert {p.query for p in encoder_pairs(train, negatives=1)} == {e.query for e in train}
    result = train_encoder(
        embedder.model_path, train, train[:3], tmp_path / "routers",
        EncoderSettings(epochs=1, batch_size=3, negatives=1, ancestor_levels=1), device="cpu", progress=False,
    )  # fmt: skip
    assert result.adapter_id.startswith("enc-") and result.folder == tmp_path / "routers" / result.adapter_id
    assert result.steps >= 1 and len(result.losses) == result.steps and result.calibrated_on == "validation"
    assert is_encoder_router(result.folder) and router_record(result.folder)["pairs"] == result.pairs
    router = load_encoder_router(result.folder)
    assert router.thresholds == result.calibration.thresholds
    # The section weight was chosen on the validation views among the settings' grid, and travels
    # with the folder.
    # Without held-out questions it is judged by the gold nodes kept within the word budgets.
    # Each weight is tried with both node texts; the chosen pair (and the node text) travels too.
    trials = {(t.weight, t.node_text): t for t in result.section_weights}
    assert set(trials) == {(w, text) for w in EncoderSettings().section_weights for text in NODE_TEXTS}
    assert result.section_chosen_by.startswith("gold")
    chosen = trials[(result.section_weight, result.node_text)]
    assert chosen.budget_recall == max(t.budget_recall for t in trials.values())
    assert all(t.routed_evidence is None and t.answer_f1 is not None for t in trials.values())
    assert router.section_weight == result.section_weight == router_record(result.folder)["section_weight"]
    assert router.fill_order == result.fill_order == router_record(result.folder)["fill_order"] == "router"
    assert (
        router.contextual
        == (result.node_text == "heading_path")
        == (router_record(result.folder)["node_text"] == "heading_path")
    )
    # Trained on nodes read under a content ancestor, it reads them so; a folder published before
    # the option (no `ancestor_levels` in its record) reads the heading path alone.
    assert router.ancestor_levels == router_record(result.folder)["ancestor_levels"] == 1 != ANCESTOR_LEVELS
    legacy = tmp_path / "legacy-router"
    shutil.copytree(result.folder, legacy)
    record = router_record(legacy)
    del record["ancestor_levels"]
    (legacy / "router.json").write_text(json.dumps(record))
    assert load_encoder_router(legacy).ancestor_levels == 0
    docs = [RetrievedDocument("kettle", tree.nodes, (2,))]
    routed = route_documents(["How much water fits in the kettle?"], [docs], router, RoutingKnobs(expand_iterations=1))
    [[doc]] = routed.documents
    assert doc.expelled == 0 and doc.collapsed_outputs == 0  # its output parses as any router's
    assert set(doc.selected_node_ids) <= {n.node_id for n in tree.nodes if n.kind == CONTENT}
    # Published atomically: training the same data again keeps one folder with the same id.
    again = train_encoder(
        embedder.model_path, train, train[:3], tmp_path / "routers",
        EncoderSettings(epochs=1, batch_size=3, negatives=1), device="cpu", progress=False,
    )  # fmt: skip
    assert [p.name for p in (tmp_path / "routers").iterdir() if not p.name.startswith(".")] in (
        [result.adapter_id],
        sorted([result.adapter_id, again.adapter_id]),
    )


def test_section_weight_is_chosen_where_gold_answers_cluster_in_sections(embedder: Embedder) -> None:
    tree = manual()
    state = DocumentRouting("kettle", tree.nodes)
    content = frozenset(n.node_id for n in tree.nodes if n.kind == CONTENT)
    view = SubtreeView("kettle", state.title, tree.nodes, content, frozenset())
    router = ScoringRouter(embedder, SimilarityThresholds(), kind="encoder")
    # "Wipe the outside" (6) says nothing of limescale alone; its section's best node (5) does.
    examples = [
        RoutingExample(q, state, view, frozenset(gold), frozenset())
        for q, gold in [("How do I remove limescale and keep the kettle clean?", {5, 6})]
    ]
    settings = EncoderSettings(section_weights=(0.0, 1.0, 4.0), section_budgets=(30,), node_texts=("heading_path",))
    choice = choose_scoring_settings(router, examples, settings)
    table = {t.weight: t.budget_recall for t in choice.trials}
    assert set(table) == {0.0, 1.0, 4.0} and table[choice.section_weight] == max(table.values())
    assert table[4.0] >= table[0.0]
    # Without held-out questions nothing judges the fill order: the router's own scores fill.
    assert choice.fill_order == "router" and {t.fill_order for t in choice.trials} == {"router"}
    no_gold = [dataclasses.replace(examples[0], answer_ids=frozenset())]
    assert choose_scoring_settings(router, no_gold, settings) == ScoringChoice(0.0, "router", [], "heading_path")

    class HeldOut:
        """Stands in for `HeldOutEvidence` (measured for real in test_held_out_evidence.py): here
        the point is that the routed figure, not the budget recall, picks the weight, and that
        each weight is judged with thresholds calibrated for it."""

        def __init__(self, figures: dict[tuple, float]) -> None:
            self.figures = figures  # (weight, order) or (weight, order, node text) -> figure
            self.questions = ["q"] * 20  # a figure's step is 1/20: the gains below are larger
            self.seen: list[tuple[float, SimilarityThresholds]] = []

        def score(self, candidate: ScoringRouter, fill_order: str | None = None) -> float:
            self.seen.append((candidate.section_weight, candidate.thresholds))
            node_text = "heading_path" if candidate.contextual else "bare"
            key = (candidate.section_weight, fill_order)
            return self.figures.get((*key, node_text), self.figures.get(key, 0.5))

    # A tie between weights 1 and 4 goes to the smaller weight; the order is judged with them.
    held_out = HeldOut({(1.0, "router"): 0.9, (4.0, "router"): 0.9, (4.0, "fused"): 0.7})
    choice = choose_scoring_settings(router, examples, settings, held_out)
    assert (choice.section_weight, choice.fill_order) == (1.0, "router")
    assert [(t.weight, t.fill_order, t.routed_evidence) for t in choice.trials] == [
        (w, order, held_out.figures.get((w, order), 0.5)) for w in (0.0, 1.0, 4.0) for order in CHOSEN_FILL_ORDERS
    ]
    assert [w for w, _ in held_out.seen] == [w for w in (0.0, 1.0, 4.0) for _ in CHOSEN_FILL_ORDERS]
    assert all(t == calibrate(router.with_section_weight(w), examples, settings).thresholds for w, t in held_out.seen)
    # A tie between orders at one weight goes to the fusion.
    tied = choose_scoring_settings(router, examples, settings, HeldOut({}))
    assert (tied.section_weight, tied.fill_order) == (0.0, "fused")

    # Both node texts are tried at every weight; the rule (below) picks among them.
    both = dataclasses.replace(settings, node_texts=NODE_TEXTS)
    choice = choose_scoring_settings(router, examples, both, HeldOut({(1.0, "router", "bare"): 0.95}))
    assert {(t.weight, t.node_text) for t in choice.trials} == {(w, n) for w in (0.0, 1.0, 4.0) for n in NODE_TEXTS}
    kept = chosen_trial(choice.trials, NODE_TEXTS)
    assert (choice.section_weight, choice.fill_order, choice.node_text) == (
        kept.weight,
        kept.fill_order,
        kept.node_text,
    )
    with pytest.raises(ValueError, match="node_texts"):
        choose_scoring_settings(router, examples, dataclasses.replace(settings, node_texts=("outline",)))


def test_training_without_any_gold_action_is_a_clear_error(embedder: Embedder, tmp_path: Path) -> None:
    tree = manual()
    state = DocumentRouting("kettle", tree.nodes)
    refuse_only = [RoutingExample("q", state, state.light((2,)), frozenset(), frozenset())]
    with pytest.raises(ValueError, match="no encoder training pairs"):
        train_encoder(embedder.model_path, refuse_only, [], tmp_path, device="cpu", progress=False)


def test_a_train_fold_of_one_question_still_takes_its_steps(embedder: Embedder, tmp_path: Path) -> None:
    # Regression: batches holding a single question used to be dropped, so a fold with one question
    # gave an empty epoch and the optimiser looped forever (a CI timeout, not an error).
    tree = manual()
    state = DocumentRouting("kettle", tree.nodes)
    only = [
        RoutingExample("How much water fits in the kettle?", state, state.light((2,)), frozenset({2, 3}), frozenset())
    ]
    result = train_encoder(
        embedder.model_path, only, [], tmp_path, EncoderSettings(max_steps=2, batch_size=4, negatives=1),
        device="cpu", progress=False,
    )  # fmt: skip
    assert result.steps == 2 and result.calibrated_on == "train"


def test_an_empty_epoch_is_a_clear_error() -> None:
    import torch

    from rag_assets.core.training.optimisation import optimise

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    with pytest.raises(ValueError, match="gives no batch"):
        optimise(lambda: [], lambda b: model(b).sum(), model, optimizer, scheduler, 3, desc="probe", progress=False)


def test_likelihood_router_ranks_every_allowed_action_against_refusing(smollm2_checkpoint: Path) -> None:
    from rag_assets.core.engines.transformers_engine import TransformersEngine
    from rag_assets.core.routing.likelihood_router import LikelihoodRouter
    from rag_assets.core.routing.navigation import RouteRequest

    tree = manual()
    engine = TransformersEngine(smollm2_checkpoint)
    router = LikelihoodRouter(engine)
    state = DocumentRouting("kettle", tree.nodes)
    view = state.light((2,))
    request = RouteRequest(0, "How much water fits in the kettle?", state, view, (2,), final_round=False)
    [scores] = router.score([request], RoutingKnobs())
    assert set(scores.answer) == set(view.visible_content_ids) and set(scores.expand) == set(view.collapsed_heading_ids)
    [last] = router.score([dataclasses.replace(request, final_round=True)], RoutingKnobs())
    assert last.expand == {}  # no EXPAND is offered in the last round
    # Through the real routing loop: whatever it picks parses as any router's output.
    docs = [RetrievedDocument("kettle", tree.nodes, (2,))]
    routed = route_documents([request.query], [docs], router, RoutingKnobs(expand_iterations=1))
    [[doc]] = routed.documents
    assert doc.expelled == 0 and doc.collapsed_outputs == 0
    assert set(doc.selected_node_ids) <= {n.node_id for n in tree.nodes if n.kind == CONTENT}
    # "No refuse": even when nothing beats refusing, the likeliest shown paragraph is answered.
    strict = LikelihoodRouter(engine, SimilarityThresholds(answer=99.0, expand=99.0))
    [reply] = strict.route([request], RoutingKnobs(allow_refuse=False))
    assert reply.text.startswith("[ANSWER]")
    [refusal] = strict.route([request], RoutingKnobs())
    assert refusal.text == "Cannot answer"


def test_bare_node_text_replaces_the_heading_path_only_when_no_worse_on_both_figures() -> None:
    def trial(weight: float, node_text: str, evidence: float, answer_f1: float, order: str = "fused"):
        return SectionWeightTrial(weight, 0.5, evidence, order, node_text, answer_f1)

    path = [trial(0.0, "heading_path", 0.6, 0.35), trial(1.0, "heading_path", 0.6, 0.30)]
    # nq_wiki's case: one held-out question more, a lower ANS-F1: the heading path stays
    more_evidence = [trial(0.0, "bare", 0.7, 0.31)]
    assert chosen_trial([*path, *more_evidence], NODE_TEXTS) == path[0]
    # the built-in corpus's case: the same evidence, a better ANS-F1: bare
    same_evidence = [trial(0.0, "bare", 0.6, 0.63)]
    assert chosen_trial([*path, *same_evidence], NODE_TEXTS) == same_evidence[0]
    # with the steps one question (of 10) and one view (of 22) can move the means by:
    # nq_wiki's second case, the same evidence and an ANS-F1 gain of one view's fraction, stays
    steps = {"evidence_step": 1 / 10, "answer_f1_step": 1 / 22}
    tie = [trial(0.0, "heading_path", 0.7, 0.2778), trial(0.0, "bare", 0.7, 0.2857)]
    assert chosen_trial(tie, NODE_TEXTS, **steps) == tie[0]
    assert chosen_trial(tie, NODE_TEXTS) == tie[1]  # without the steps any gain counted
    # one question more is within the evidence step too; two questions more are not
    assert chosen_trial([*tie, trial(1.0, "bare", 0.8, 0.2857)], NODE_TEXTS, **steps) == tie[0]
    assert chosen_trial([*tie, trial(1.0, "bare", 0.9, 0.2857)], NODE_TEXTS, **steps).routed_evidence == 0.9
    # the built-in corpus's gain (0.631 against 0.463 on 28 views) is far beyond one view's
    wide = [trial(0.0, "heading_path", 0.6, 0.463), trial(0.0, "bare", 0.6, 0.631)]
    assert chosen_trial(wide, NODE_TEXTS, evidence_step=1 / 10, answer_f1_step=1 / 28) == wide[1]
    # better on both; equal on both keeps the first
    assert chosen_trial([*path, trial(1.0, "bare", 0.7, 0.4)], NODE_TEXTS).node_text == "bare"
    assert chosen_trial([*path, trial(0.0, "bare", 0.6, 0.35)], NODE_TEXTS) == path[0]
    # within a node text: the best figure, ties to the smaller weight, then to the fusion
    tied = [trial(2.0, "heading_path", 0.8, 0.1), trial(1.0, "heading_path", 0.8, 0.1, "router"),
            trial(1.0, "heading_path", 0.8, 0.1)]  # fmt: skip
    assert chosen_trial(tied, ("heading_path",)) == tied[2]
