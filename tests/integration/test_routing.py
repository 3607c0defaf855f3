"""The routing loop end to end with the real transformers engine and the real SmolLM2."""

from __future__ import annotations

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.routing.navigation import RetrievedDocument, RoutingKnobs, route_documents, router_regex
from rag_assets.core.routing.routed_evidence import render_evidence
from rag_assets.core.routing.subtree import DocumentRouting
from tests.integration.conftest import CountingEngine


def docs():
    kettle = build_tree(
        "Kettle",
        [
            heading("Boiling", 1),
            paragraph("Press the switch to boil."),
            heading("Cleaning", 1),
            paragraph("Descale with vinegar monthly."),
        ],
    )
    pond = build_tree(
        "Pond",
        [
            heading("Winter", 1),
            paragraph("Keep a hole in the ice."),
            heading("Summer", 1),
            paragraph("Top up the water."),
        ],
    )
    return [RetrievedDocument("kettle", kettle.nodes, (2,)), RetrievedDocument("pond", pond.nodes, (2,))], {
        "kettle": kettle.nodes,
        "pond": pond.nodes,
    }


def test_each_round_is_one_batched_engine_call(counting_engine: CountingEngine) -> None:
    retrieved, _trees = docs()
    questions = ["How do I boil water?", "What to do with the pond in winter?"]
    counting_engine.reset()
    result = route_documents(
        questions, [retrieved, retrieved], counting_engine, RoutingKnobs(expand_iterations=2, max_new_tokens=24)
    )
    assert counting_engine.sizes[0] == 4  # round 1: 2 questions x 2 documents in one call
    # Each view of each document has one collapsed heading (Cleaning, Summer) and nothing is left
    # to expand once it is open: round 2 routes exactly the documents expanded in round 1, and
    # there is no round 3 whatever the model says.
    assert len(counting_engine.sizes) in (1, 2), counting_engine.sizes
    assert result.engine_calls_per_round == [1] * len(counting_engine.sizes)
    user_turns = [chat[1]["content"] for batch in counting_engine.calls for chat in batch]
    for question, per_question in zip(questions, result.documents):
        assert [d.doc_id for d in per_question] == ["kettle", "pond"]
        for doc in per_question:
            # one router call per view of this document the engine was sent for this question
            sent = sum(
                turn.startswith(f"Question: {question}\n") and f"Document:\n0: {doc.doc_id.title()}\n" in turn
                for turn in user_turns
            )
            assert 1 <= sent <= 2 and doc.router_calls == sent, (question, doc.doc_id, doc.router_calls, sent)
            assert set(doc.selected_node_ids) <= {2, 4}  # only content nodes can ever be selected
    assert sum(d.router_calls for per_question in result.documents for d in per_question) == sum(counting_engine.sizes)
    assert all(t > 0 for t in result.prompt_tokens) and all(t > 0 for t in result.output_tokens)


def test_evidence_keeps_heading_paths_and_retrieval_order() -> None:
    from rag_assets.core.routing.routed_evidence import RoutedDocument

    _, trees = docs()
    routed = [RoutedDocument("pond", [4, 2]), RoutedDocument("kettle", []), RoutedDocument("kettle", [4])]
    assert render_evidence(routed, trees) == (
        "# Pond > Winter\nKeep a hole in the ice.\n# Pond > Summer\nTop up the water.\n\n"
        "# Kettle > Cleaning\nDescale with vinegar monthly."
    )
    assert render_evidence(routed, trees, numbered=True) == (
        "# Pond > Winter\n[1] Keep a hole in the ice.\n# Pond > Summer\n[2] Top up the water.\n\n"
        "# Kettle > Cleaning\n[3] Descale with vinegar monthly."
    )


def test_nodes_under_one_heading_path_share_one_heading_line() -> None:
    from rag_assets.core.routing.routed_evidence import RoutedDocument, fit_evidence, heading_words, node_words

    tree = build_tree(
        "Kettle",
        [heading("Cleaning", 1), paragraph("Descale monthly."), paragraph("Use white vinegar."),
         paragraph("Rinse twice before use.")],
    )  # fmt: skip
    trees = {"manual": tree.nodes}
    routed = [RoutedDocument("manual", [4, 2, 3])]
    assert render_evidence(routed, trees, numbered=True) == (
        "# Kettle > Cleaning\n[1] Descale monthly.\n[2] Use white vinegar.\n[3] Rinse twice before use."
    )
    # The budget counts the shared heading line once: 4 + 5 + 3 = 12 words for the two best nodes;
    # the third would make 16.
    assert heading_words(tree.nodes[2]) == 4 and [node_words(tree.nodes[n]) for n in (2, 3, 4)] == [3, 4, 5]
    fit_evidence(routed, trees, 15, {(0, 4): 0.9, (0, 2): 0.8, (0, 3): 0.1})
    assert routed[0].selected_node_ids == [4, 2] and len(render_evidence(routed, trees, numbered=True).split()) == 12


def test_no_expand_ablation_makes_exactly_one_round(counting_engine: CountingEngine) -> None:
    retrieved, _ = docs()
    counting_engine.reset()
    result = route_documents(
        ["How do I clean the kettle?"],
        [retrieved],
        counting_engine,
        RoutingKnobs(expand_iterations=3, allow_expand=False, max_new_tokens=16),
    )
    assert counting_engine.sizes == [2] and result.engine_calls_per_round == [1]


def test_constrained_routing_never_expels_or_collapses(counting_engine: CountingEngine) -> None:
    """The untrained 135M model writes prose when free; under each view's grammar (xgrammar in
    the transformers engine) every output is a valid action or a refusal."""
    retrieved, _ = docs()
    result = route_documents(
        ["How do I boil water?", "What to do with the pond in winter?", "Who won in 1966?"],
        [retrieved] * 3,
        counting_engine,
        RoutingKnobs(expand_iterations=1, max_new_tokens=48),
    )
    routed = [doc for per_question in result.documents for doc in per_question]
    assert sum(d.expelled for d in routed) == 0 and sum(d.collapsed_outputs for d in routed) == 0
    assert all(d.selected_node_ids or d.refused for d in routed if d.router_calls == 1)


def test_the_last_round_cannot_expand(counting_engine: CountingEngine) -> None:
    """An EXPAND in the last round would be followed by nothing: its grammar offers only
    ANSWER and the refusal, so the router's last word is always usable."""
    retrieved, trees = docs()
    view = DocumentRouting("kettle", trees["kettle"]).light([2])
    assert "EXPAND" in router_regex(view, RoutingKnobs()) and "EXPAND" not in router_regex(
        view, RoutingKnobs(), final_round=True
    )
    counting_engine.reset()
    route_documents(
        ["How do I clean the kettle?"],
        [retrieved],
        counting_engine,
        RoutingKnobs(expand_iterations=0, max_new_tokens=16),
    )
    assert len(counting_engine.grammars) == 1 and not any("EXPAND" in g for g in counting_engine.grammars[0])
    counting_engine.reset()
    route_documents(
        ["How do I clean the kettle?"],
        [retrieved],
        counting_engine,
        RoutingKnobs(expand_iterations=1, max_new_tokens=24),
    )
    assert all("EXPAND" in g for g in counting_engine.grammars[0])
    assert all("EXPAND" not in g for grammars in counting_engine.grammars[1:] for g in grammars)


def test_routing_grammar_names_only_the_nodes_the_budget_left(counting_engine: CountingEngine) -> None:
    blocks = []
    for chapter in range(1, 41):
        blocks += [heading(f"Chapter {chapter} of the manual", 1), paragraph(f"Chapter {chapter} text.")]
    tree = build_tree("Manual", blocks)
    hit = next(n.node_id for n in tree.nodes if n.text == "Chapter 20 text.")
    counting_engine.reset()
    route_documents(
        ["What is in chapter 20?"],
        [[RetrievedDocument("manual", tree.nodes, (hit,))]],
        counting_engine,
        RoutingKnobs(expand_iterations=1, max_new_tokens=16, token_budget=120),
    )
    [grammar] = counting_engine.grammars[0]  # round 1, where EXPAND is allowed
    far = next(n.node_id for n in tree.nodes if n.text == "Chapter 40 of the manual")
    assert f"{hit}: Chapter 20 text" in grammar and "\\[EXPAND\\] (1: Chapter 1 of" in grammar
    assert f"{far}:" not in grammar  # cut from the outline for the budget: not expandable
