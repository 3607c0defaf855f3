"""rdr2's routing settings learned per collection (core/answering/policy/routing_choice.py): the
choice on hand-made per-question scores, its record, and how asks and the report's specs apply it."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.policy.asks import plan_ask
from rag_assets.core.answering.policy.catalogue import DEFAULT_SETTINGS, StrategySettings, strategy_specs
from rag_assets.core.answering.policy.options import AskOptions
from rag_assets.core.answering.policy.routing_choice import (
    MIN_QUESTIONS,
    RoutingChoice,
    RoutingSetting,
    candidate_settings,
    choose_routing,
    routing_problems,
)
from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.evaluation.scoring import routing_metric
from rag_assets.core.routing.teachers import SimilarityThresholds
from rag_assets.core.store.publication import IndexPin

pytestmark = pytest.mark.unit

DEFAULT = RoutingSetting(20, 2)
WIDER = RoutingSetting(50, 2)
ONE_FILING = RoutingSetting(20, 1, 0.45)
QIDS = [f"q{i}" for i in range(20)]


def test_a_setting_right_where_the_default_misses_is_learned() -> None:
    # The default finds the evidence for half the questions, the wider search for all of them,
    # the one-filing setting for none: the wider one wins on every question the default misses.
    scores = {DEFAULT: [1.0, 0.0] * 10, WIDER: [1.0] * 20, ONE_FILING: [0.0] * 20}
    choice = choose_routing(scores, QIDS, router="encoder", metric="page_hit")
    assert choice.setting == WIDER and choice.learned and choice.default == DEFAULT
    assert choice.interval is not None and choice.interval[0] > 0
    # every fold's choice on the other folds is the wider search, so the held-out gain is its
    # gain on every question: +1 on the ten the default misses, 0 on the others
    assert choice.cross_fitted is not None and choice.cross_fitted[0] == pytest.approx(0.5)
    assert choice.reason.startswith("learned for the collection: page_hit on 20 train questions: the default 0.500")
    assert dict(choice.means) == {DEFAULT: 0.5, WIDER: 1.0, ONE_FILING: 0.0}


def test_a_win_within_noise_keeps_the_defaults() -> None:
    # one question of twenty: the paired interval of the difference reaches 0
    scores = {DEFAULT: [1.0] * 19 + [0.0], WIDER: [1.0] * 20}
    choice = choose_routing(scores, QIDS, router="encoder", metric="passage_hit")
    assert choice.setting == DEFAULT and not choice.learned
    assert choice.interval is not None and choice.interval[0] <= 0
    assert "not better beyond noise" in choice.reason


def test_too_few_questions_or_a_tie_keep_the_defaults() -> None:
    few = QIDS[: MIN_QUESTIONS - 1]
    choice = choose_routing(
        {DEFAULT: [0.0] * len(few), WIDER: [1.0] * len(few)}, few, router="encoder", metric="section_hit"
    )
    assert choice.setting == DEFAULT and choice.reason.endswith("too few questions to learn settings")
    tie = choose_routing({DEFAULT: [1.0, 0.0] * 10, WIDER: [1.0, 0.0] * 10}, QIDS, router="encoder", metric="x")
    assert tie.setting == DEFAULT and tie.interval is None and tie.reason.endswith("no candidate better")
    none = choose_routing({DEFAULT: []}, [], router="encoder", metric="")
    assert none.setting == DEFAULT and none.questions == 0 and none.reason.startswith("the defaults: no train")
    with pytest.raises(ValueError, match="one score per question"):
        choose_routing({DEFAULT: [1.0], WIDER: [1.0, 0.0]}, ["a"], router="encoder", metric="x")


def test_the_grid_starts_with_the_default_and_lowers_the_calibrated_expand_threshold() -> None:
    grid = candidate_settings(DEFAULT, 0.575)
    assert grid[0] == DEFAULT and len(grid) == 18 and len(set(grid)) == 18
    assert {s.passages_per_query for s in grid} == {20, 50} and {s.documents for s in grid} == {1, 2, 3}
    assert {s.expand_threshold for s in grid} == {None, 0.475, 0.375}
    # a router without thresholds (one that writes its actions): no expand axis
    assert {s.expand_threshold for s in candidate_settings(DEFAULT, None)} == {None}
    assert len(candidate_settings(DEFAULT, None)) == 6


def test_the_choice_is_recorded_and_read_back() -> None:
    scores = {DEFAULT: [1.0, 0.0] * 10, ONE_FILING: [1.0] * 20}
    choice = choose_routing(scores, QIDS, router="encoder", metric="page_hit")
    assert RoutingChoice.from_details(choice.details()) == choice
    assert choice.details()["setting"] == {"passages_per_query": 20, "documents": 1, "expand_threshold": 0.45}


def test_a_published_choice_that_breaks_its_rule_is_caught() -> None:
    learned = choose_routing({DEFAULT: [1.0, 0.0] * 10, WIDER: [1.0] * 20}, QIDS, router="encoder", metric="m")
    assert routing_problems(learned) == []
    assert routing_problems(None) == []  # an older policy without routing: asks use the defaults
    unearned = RoutingChoice(WIDER, DEFAULT, "encoder", "m", 20, learned.means, (-0.1, 0.3), (0.1, 0.0, 0.2))
    assert routing_problems(unearned) == ["rdr2's routing settings differ from the defaults without beating them"]
    stray = RoutingChoice(RoutingSetting(7, 9), DEFAULT, "encoder", "m", 20, learned.means, (0.2, 0.4), (0.3, 0.1, 0.5))
    assert routing_problems(stray) == [
        "rdr2's published routing (passages 7, documents 9, expand calibrated) is not a measured candidate"
    ]


def _published(routing: RoutingChoice | None, routers: dict | None = None) -> PublishedCollection:
    return PublishedCollection(
        "fin",
        IndexPin("fin", None, None, None, 0, True, ""),
        routers if routers is not None else {"encoder": object()},
        SimilarityThresholds(),
        None,
        None,
        None,
        routing_choice=routing,
    )


LEARNED = RoutingChoice(
    ONE_FILING, DEFAULT, "encoder", "page_hit", 20, ((DEFAULT, 0.5), (ONE_FILING, 1.0)), (0.3, 0.7), (0.5, 0.3, 0.7)
)


def test_an_ask_routes_with_the_learned_settings_unless_it_overrides_them() -> None:
    notes: list[str] = []
    spec = plan_ask("rdr2", _published(LEARNED), [], note=notes.append)
    assert (spec.passages_per_query, spec.top_k, spec.expand_threshold) == (20, 1, 0.45)
    assert any(
        n.startswith("routing with passages 20, documents 1, expand 0.450 (learned for the collection") for n in notes
    )
    asked = plan_ask("rdr2", _published(LEARNED), [], AskOptions(top_k=3))
    assert (asked.top_k, asked.expand_threshold) == (3, 0.45)  # the asker's documents win
    # the similarity router's scores are on another scale: the encoder's threshold is not carried
    similar = plan_ask("rdr2-similarity", _published(LEARNED), [])
    assert (similar.top_k, similar.expand_threshold) == (1, None)
    # no trained encoder published: the fallback to the untrained one drops the encoder's threshold
    fallback = plan_ask("rdr2", _published(LEARNED, routers={}), [])
    assert (fallback.router, fallback.top_k, fallback.expand_threshold) == ("similarity", 1, None)
    # nothing published: the evaluated defaults
    assert plan_ask("rdr2", _published(None), []).top_k == DEFAULT_SETTINGS.top_k
    assert plan_ask("rag-hybrid", _published(LEARNED), []).top_k == DEFAULT_SETTINGS.rag_top_k


def test_the_reports_rdr2_rows_route_with_the_learned_settings_unless_configured_off() -> None:
    specs = strategy_specs(DEFAULT_SETTINGS, "short", None, routing=DEFAULT_SETTINGS.routing(LEARNED))
    assert all(specs[n].top_k == 1 for n in ("rdr2", "rdr2-extractive", "rdr2-no-expand", "rdr2-oracle"))
    assert specs["rdr2"].expand_threshold == 0.45 and specs["rdr2-oracle"].expand_threshold is None
    assert specs["rag-hybrid"].top_k == DEFAULT_SETTINGS.rag_top_k
    assert specs["rdr2"].knobs()["expand_threshold"] == 0.45 and specs["rdr2"].knobs()["passages_per_query"] == 20
    configured = StrategySettings(learned_routing=False, top_k=4)
    own = strategy_specs(configured, "short", None, routing=configured.routing(LEARNED))
    assert own["rdr2"].top_k == 4 and own["rdr2"].expand_threshold is None


def test_paged_sets_choose_their_routing_by_page_hit() -> None:
    # FinanceBench's questions carry gold pages and gold evidence text: the page decides
    assert routing_metric({"passage_hit", "evidence_recall", "page_hit"}) == "page_hit"
    assert routing_metric({"passage_hit", "evidence_recall"}) == "evidence_recall"  # conditionalqa
    assert routing_metric({"passage_hit", "section_hit"}) == "section_hit"  # emanual
    assert routing_metric({"passage_hit"}) == "passage_hit" and routing_metric(set()) is None
