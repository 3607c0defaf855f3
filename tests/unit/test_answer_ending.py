"""Answers cut by the reader's token limit end on a complete sentence; one name per strategy."""

from __future__ import annotations

import pytest

from rag_assets.core.answering.answer_ending import complete_answer
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.errors import ConfigError


def test_a_cut_answer_keeps_its_complete_sentences() -> None:
    cut = "Use water at 80 C. Let it steep for two minutes, and then the function is"
    assert complete_answer(cut, 32, 32) == "Use water at 80 C."
    assert complete_answer('He said "stop." Then the', 10, 10) == 'He said "stop."'


def test_an_answer_within_its_budget_is_untouched() -> None:
    assert complete_answer("80 C and then the", 7, 32) == "80 C and then the"


def test_a_cut_answer_without_a_sentence_end_is_marked() -> None:
    assert complete_answer("80 degrees for green tea and then", 32, 32) == "80 degrees for green tea and then…"
    assert complete_answer("- kettle\n- pot\n- cu", 12, 12) == "- kettle\n- pot"


def test_only_rdr2_rows_say_which_router_routed() -> None:
    rag = StrategySpec("rag-hybrid", "rag", top_k=5)
    assert rag.knobs()["router"] is None
    assert StrategySpec("rdr2", "rdr2", router="encoder").knobs()["router"] == "encoder"


def test_interactive_specs_are_the_evaluated_rows() -> None:
    from rag_assets.core.answering.policy.catalogue import canonical_strategy, named_spec, strategy_specs
    from rag_assets.defs.evaluation.strategy_config import AnswersConfig

    evaluated = strategy_specs(AnswersConfig().settings(), "short", None)
    assert named_spec("rdr2", "short", None) == evaluated["rdr2"]
    assert named_spec("rdr2", "short", None).top_k == 2
    assert named_spec("rdr2", "short", None).expand_iterations == 1
    assert named_spec("rag", "short", None) == evaluated["rag-hybrid"]
    assert canonical_strategy("none") == "no-retrieval"
    with pytest.raises(ConfigError, match=r"strategy must be one of .*rag-hybrid.*not 'magic'"):
        canonical_strategy("magic")
    with pytest.raises(ConfigError, match="not 'rdr2-oracle'"):  # needs gold labels
        canonical_strategy("rdr2-oracle")
