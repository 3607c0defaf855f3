"""ConTReGen and Disco-RAG for real: the conftest corpus in a LanceDB index, the real embedder, the
packaged SmolLM2 in the transformers engine (small budgets), engine calls counted on a wrapper."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.answering.generation.prompts import DISCOURSE_RELATIONS, RHETORICAL_RELATIONS
from rag_assets.core.answering.strategy_runner import run_strategy
from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.tree_building import document_tree
from rag_assets.core.engines.base import Generation
from rag_assets.core.lineage import answer_versions, build_record, store_answers, trace_answer
from rag_assets.core.lineage.structures import structure_citations, structure_lines
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import documents_table
from rag_assets.core.store.tree_tables import nodes_table, texts_table
from tests.integration.conftest import CountingEngine, IndexedCorpus

QUESTIONS = [
    "How much water goes into the kettle and how hot should it be for green tea?",
    "What keeps the pond fish alive in winter?",
    "How do I charge the phone battery?",
]


class GarblingEngine(CountingEngine):
    """The real engine (one output token), its every output replaced by text no grammar accepts."""

    def generate(self, batch, **kwargs):
        real = super().generate(batch, **{**kwargs, "max_new_tokens": 1, "regex": None})
        return [Generation("\x00 ### [99] -> ?? " + g.text, g.prompt_tokens, 9) for g in real]


@pytest.fixture(scope="module")
def garbling(smollm2_checkpoint: Path) -> GarblingEngine:
    return GarblingEngine(smollm2_checkpoint, batch_size=16)


def _spans_exact(structure: dict, texts: dict[str, str]) -> int:
    cites = list(structure_citations(structure))
    for cite in cites:
        start, end = cite["span"]
        assert texts[cite["doc_id"]][start:end] == cite["text"], cite
    return len(cites)


def _stage_calls(engine: CountingEngine, outcomes) -> list[str]:
    """The stages of a run in call order; each called the engine exactly once."""
    stages = list(dict.fromkeys(s for o in outcomes for s in o.structure["stages"]))
    assert len(engine.calls) == len(stages)  # one engine call per stage, whatever the questions
    return stages


CONTREGEN = StrategySpec(
    "contregen", "contregen", top_k=1, tree_depth=2, tree_branching=2, stage_max_new_tokens=16, reader_max_new_tokens=8
)


def test_contregen_one_call_per_level_for_all_questions_and_a_traceable_tree(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus, tmp_path: Path
) -> None:
    retrieve, trees, texts, docs = (
        indexed_corpus.retrieve,
        indexed_corpus.trees,
        indexed_corpus.texts,
        indexed_corpus.docs,
    )
    counting_engine.reset()
    outcomes = run_strategy(QUESTIONS[:2], CONTREGEN, retrieve=retrieve, trees=trees, engine=counting_engine)
    stages = _stage_calls(counting_engine, outcomes)
    assert len(counting_engine.calls) <= 2 * CONTREGEN.tree_depth + 1  # one call per level / stage, never per question
    assert (
        stages[0] == "decompose@1"
        and counting_engine.sizes[0] == 2
        and stages[-1] == "answer"
        and counting_engine.sizes[-1] == 2
    )
    assert stages[-2] == "summarise" or stages[-2].startswith("synthesise@")
    for question, outcome in zip(QUESTIONS, outcomes):
        tree = outcome.structure["tree"]
        assert tree["query"] == question and tree["status"] in ("decomposed", "fallback")
        counts = outcome.structure["counts"]
        assert counts["decomposition_fallbacks"] == sum(1 for n in _nodes(tree) if n["status"] == "fallback")
        for node in _nodes(tree):
            assert (node["status"] == "decomposed") == bool(node["children"])
        leaves = [node for node in _nodes(tree) if not node["children"]]
        assert leaves  # every leaf retrieved its own passage, with exact source spans
        assert all(len(leaf["passages"]) == 1 and leaf["passages"][0]["citations"] for leaf in leaves)
        assert _spans_exact(outcome.structure, texts) >= 1
        assert outcome.engine_calls == len(outcome.structure["stages"]) and outcome.router_prompt_tokens > 0
        assert outcome.citations  # the reader's citations: leaves whose findings reached the root
        for cite in outcome.citations:
            assert texts[cite.doc_id][cite.span_start : cite.span_end] == cite.text
        json.dumps(outcome.structure)

    # stored with the answer, traced down to the exact spans; a changed document shows
    con = duckdb.connect(str(tmp_path / "catalogue.duckdb"))
    built = [(d, document_tree(d)) for d in docs]
    replace_collection(
        con,
        "tiny",
        {
            "source_documents": documents_table(docs),
            "document_nodes": nodes_table(built),
            "document_texts": texts_table(built),
        },
    )
    versions = answer_versions(
        con, "tiny", outcomes[0], index=None, adapter_id=None, router_model=None, reader_model="smol", embedder=None
    )
    record = build_record(outcomes[0], CONTREGEN, collection="tiny", source="cli", versions=versions)
    store_answers(con, [record])
    trace = trace_answer(con, record.answer_id)
    assert trace.structure["tree"]["query"] == QUESTIONS[0] and not trace.changed
    resolved = list(structure_citations(trace.structure))
    assert resolved and all(c["current_text"] == c["text"] and not c["changed"] for c in resolved)
    lines = structure_lines(trace.structure)
    assert lines[0].startswith("synthesis tree (contregen, depth 2") and any(" chars " in line for line in lines)
    doc = resolved[0]["doc_id"]
    con.execute("UPDATE document_texts SET text = upper(text) WHERE doc_id = ?", [doc])
    assert trace_answer(con, record.answer_id).changed
    con.close()


def _nodes(tree: dict):
    yield tree
    for child in tree["children"]:
        yield from _nodes(child)


DISCO = StrategySpec("disco", "disco", top_k=2, stage_max_new_tokens=16, reader_max_new_tokens=6)


def test_disco_and_its_ablation_batch_each_stage_and_keep_units_at_their_spans(
    counting_engine: CountingEngine, indexed_corpus: IndexedCorpus
) -> None:
    retrieve, trees, texts = indexed_corpus.retrieve, indexed_corpus.trees, indexed_corpus.texts
    runs = {}
    for count in (1, 2):
        counting_engine.reset()
        outcomes = run_strategy(QUESTIONS[:count], DISCO, retrieve=retrieve, trees=trees, engine=counting_engine)
        runs[count] = (counting_engine.sizes, _stage_calls(counting_engine, outcomes), outcomes)
    for count, (calls, stages, _) in runs.items():
        assert stages == ["discourse", "graph", "blueprint", "answer"][-len(stages) :] and len(calls) <= 4
        assert calls[-1] == calls[-2] == count  # one blueprint and one reader call for all questions
    assert runs[1][1] == runs[2][1]  # the same stages, one call each, for one question or two
    _, _, outcomes = runs[2]
    labelled = 0
    for outcome in outcomes:
        structure = outcome.structure
        assert len(structure["chunks"]) == 2 and _spans_exact(structure, texts) > 2
        for chunk in structure["chunks"]:
            assert chunk["status"] in ("parsed", "fallback", "single-unit")
            related = [unit for unit in chunk["units"] if unit["relation"] is not None]
            # a parsed discourse tree relates at least one unit; a fallback or a one-unit chunk none
            assert bool(related) == (chunk["status"] == "parsed")
            assert all(u["relation"] in DISCOURSE_RELATIONS and 1 <= u["parent"] < u["unit"] for u in related)
            labelled += len(related)
        assert [(e["from"], e["to"]) for e in structure["graph"]] == [(1, 2)]
        assert all(e["relation"] in (*RHETORICAL_RELATIONS, None) for e in structure["graph"])
        steps = structure["blueprint"]["steps"]
        assert structure["blueprint"]["status"] in ("parsed", "fallback") and 1 <= len(steps) <= 3
        assert all(1 <= s["passage"] <= 2 for s in steps)
        assert outcome.evidence.startswith("[1] ") and "\n\nPlan:\n- [" in outcome.evidence
        assert len(outcome.passage_ids) == 2 and outcome.citations and outcome.engine_calls == len(structure["stages"])
    assert labelled  # under the grammar the real model labels discourse relations
    lines = structure_lines(outcomes[0].structure)
    assert lines[0].startswith("disco (stages") and any("blueprint [" in line for line in lines)

    counting_engine.reset()
    plain = run_strategy(
        QUESTIONS[:2],
        dataclasses.replace(DISCO, name="disco-no-structure", discourse=False),
        retrieve=retrieve,
        trees=trees,
        engine=counting_engine,
    )
    assert counting_engine.sizes == [2, 2]  # the ablation: blueprint + reader only
    for outcome, structured in zip(plain, outcomes):
        assert outcome.structure["chunks"][0]["units"] == [] and outcome.structure["graph"] == []
        assert outcome.passage_ids == structured.passage_ids  # same evidence, without its structure
        assert "How the passages relate" not in outcome.evidence and "Plan:" in outcome.evidence


def test_malformed_output_at_every_stage_is_counted_and_falls_back_visibly(
    garbling, indexed_corpus: IndexedCorpus
) -> None:
    retrieve, trees = indexed_corpus.retrieve, indexed_corpus.trees
    [tree_outcome] = run_strategy(QUESTIONS[:1], CONTREGEN, retrieve=retrieve, trees=trees, engine=garbling)
    counts, tree = tree_outcome.structure["counts"], tree_outcome.structure["tree"]
    # the undecomposed query retrieves for itself; its unusable summary passes its passage on
    assert tree["status"] == "fallback" and tree["children"] == [] and tree["raw"].startswith("\x00")
    assert counts["decomposition_fallbacks"] == 1 and counts["decomposition_invalid_lines"] == 1
    assert counts["summary_fallbacks"] == 1 and tree["finding_status"] == "fallback" and tree["finding"]
    assert tree_outcome.structure["stages"] == ["decompose@1", "summarise", "answer"]

    [disco] = run_strategy(QUESTIONS[:1], DISCO, retrieve=retrieve, trees=trees, engine=garbling)
    counts = disco.structure["counts"]
    multi = [c for c in disco.structure["chunks"] if len(c["units"]) >= 2]
    assert multi  # the garbled discourse stage had a multi-unit chunk to fail on
    assert all(c["status"] == "fallback" for c in multi) and counts["discourse_fallbacks"] == len(multi)
    assert counts["graph_invalid"] == 1 and disco.structure["graph"][0]["relation"] is None
    assert counts["blueprint_fallbacks"] == 1 and disco.structure["blueprint"]["status"] == "fallback"
    assert "- [1] use what this passage says" in disco.evidence and "(2, " not in disco.evidence
