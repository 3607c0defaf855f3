"""router_metrics materialized for real on the tiny corpus (DuckDB and LanceDB in tmp_path, the
packaged MiniLM embedder, SmolLM2's tokenizer for the view budget): it scores the views of the
dev + test questions, which it builds itself, with intervals; and falls back to the routing
validation fold, saying so, when the collection has no dev/test questions."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from rag_assets.core.index.retrieval import search
from rag_assets.core.routing.evaluation_views import ViewKnobs, evaluation_views
from rag_assets.core.store.question_table import load_question_rows
from rag_assets.core.store.tree_tables import load_trees
from tests.conftest import tiny_project
from tests.integration.test_router_assets import _materialize, _meta

# With validation_fraction 0.5 the routing fold puts "filter" and "alex" in validation.
TRAIN = [
    {"qid": "tea", "question": "How hot should the water be for green tea?", "answers": ["80 C"]},
    {"qid": "fill", "question": "What is the maximum amount of water in the kettle?", "answers": ["1.7 litres"]},
    {"qid": "filter", "question": "How do I clean the pond filter?", "answers": ["rinse the sponge"]},
    {"qid": "alex", "question": "When was the Pharos of Alexandria built?", "answers": ["280 BC"]},
]
EVALUATION = [
    {"qid": "charger", "question": "Which charger should I use for the battery?", "answers": ["supplied charger"]},
    {"qid": "ice", "question": "Why keep a hole in the ice of the pond in winter?"},  # no gold: left out
    {"qid": "tide", "question": "How many high tides are there each day?", "answers": ["two high tides"]},
    {"qid": "pass", "question": "What does the pass statement do?", "answers": ["null operation"]},
]
SPLITS = {"charger": "dev", "ice": "dev", "tide": "test", "pass": "test"}
UPSTREAM = ("source_documents", "document_trees", "passages", "passage_index", "questions", "synthetic_questions")
ROUTING = ("routing_subtrees", "routing_actions")
RATES = ("ans_f1", "exp_pre", "ref_acc")


def _jsonl(questions: list[dict]) -> str:
    return "".join(json.dumps({**q, "split": SPLITS.get(q["qid"], "train")}) + "\n" for q in questions)


@pytest.fixture
def project(tmp_path: Path, corpus_dir: Path, smollm2_checkpoint: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    return tiny_project(tmp_path, corpus_dir, smollm2_checkpoint, _jsonl(TRAIN + EVALUATION))


def _run(project: dict, *keys: str) -> dict[str, dict]:
    ops = {
        "routing_subtrees": {"top_docs": 2, "expansion_views": 1},
        "routing_actions": {"teacher": "oracle", "validation_fraction": 0.5},
        "router_metrics": {"max_samples": 0},  # the scoring routers only: no LLM on CPU
    }
    return _meta(_materialize(project, *keys, ops=ops))


def _stored(project: dict) -> dict[str, dict]:
    with duckdb.connect(str(project["db"])) as con:
        cursor = con.execute("SELECT * FROM router_metrics WHERE collection = 'tiny'")
        names = [d[0] for d in cursor.description]
        return {row[names.index("model")]: dict(zip(names, row)) for row in cursor.fetchall()}


@pytest.mark.timeout(900)
def test_router_metrics_scores_every_dev_test_question_with_intervals_then_falls_back(project: dict) -> None:
    meta = _run(project, *UPSTREAM, *ROUTING, "router_metrics")
    metrics = meta["router_metrics"]
    with duckdb.connect(str(project["db"])) as con:
        trained_on = {qid for (qid,) in con.execute("SELECT DISTINCT qid FROM routing_subtrees").fetchall()}
    assert trained_on == {q["qid"] for q in TRAIN}  # routing_subtrees, untouched, never sees dev/test
    # the views are of the dev + test questions with gold, and of no other question
    assert metrics["views_from"] == "dev+test questions, oracle labels" and metrics["questions"] == 3
    by_split = metrics["questions_by_split"]
    assert "| dev | 1 |" in by_split and "| test | 2 |" in by_split and "train" not in by_split
    assert 3 <= metrics["samples"] <= 3 * 2 * 2  # questions x top_docs x (initial + 1 expansion)
    assert "ice" in metrics["notes"] and "without gold" in metrics["notes"]
    assert "top_docs=2 (routing_subtrees)" in metrics["notes"]  # built as the training views were
    # ... by the same code: the train questions' views, built the way router_metrics builds its
    # views, are exactly the views routing_subtrees stored
    with duckdb.connect(str(project["db"])) as con:
        stored_ids = {sid for (sid,) in con.execute("SELECT subtree_id FROM routing_subtrees").fetchall()}
        questions = load_question_rows(con, "tiny", "train")
        trees = {doc_id: nodes for doc_id, (nodes, _) in load_trees(con, "tiny").items()}
    model = project["resources"]["embedder"].get()
    index = project["resources"]["vectors"].index(model)
    rebuilt = evaluation_views(
        questions,
        lambda query, k: search(index, model, query, k=k, collections=["tiny"]),
        trees,
        ViewKnobs(top_docs=2, passages_per_query=10, expansion_views=1, token_budget=512),
        project["resources"]["base_model"].token_counter(),
    )
    assert {s.subtree_id for s, _ in rebuilt.views} == stored_ids
    assert f"Router on all {metrics['samples']} dev+test views (3 questions)" in metrics["metrics"]
    assert "EXP-PRE 95% interval" in metrics["metrics"] and "REF-ACC 95% interval" in metrics["metrics"]
    assert metrics["interval_unit"].startswith("questions")
    stored = _stored(project)
    assert set(stored) == {"similarity"}  # no router trained, no LLM view asked for
    row = stored["similarity"]
    assert (row["samples"], row["questions"], row["dev_test"]) == (metrics["samples"], 3, True)
    for rate in RATES:
        assert 0.0 <= row[f"{rate}_low"] <= row[rate] <= row[f"{rate}_high"] <= 1.0
        assert metrics[f"similarity/{rate}_interval"] == f"{row[f'{rate}_low']:.3f}-{row[f'{rate}_high']:.3f}"
    # each question's answer is in one document of the two it sees: one gold answer view and one
    # gold refusal per question, and the oracle labels write no EXPAND line
    assert (row["samples"], row["gold_answer_views"], row["refusal_views"], row["expand_lines"]) == (6, 3, 3, 0)
    # the similarity router refuses every view the gold refuses: every question right, so every
    # resample of questions is right and the interval is the point 1.0
    assert (row["ref_acc"], row["ref_acc_low"], row["ref_acc_high"]) == (1.0, 1.0, 1.0)
    # its answers: F1 1, 1 and 2/3 on the three questions' answer views, so 8/9; the interval spans
    # a resample of the 2/3 question alone (drawn 3 times in 3: 1/27 of resamples, above the 2.5%
    # tail) to a resample without it (8/27 of them)
    assert row["answer_views"] == 3
    assert row["ans_f1"] == pytest.approx(8 / 9)
    assert (row["ans_f1_low"], row["ans_f1_high"]) == (pytest.approx(2 / 3), 1.0)
    assert (row["exp_pre"], row["exp_pre_low"], row["exp_pre_high"]) == (0.0, 0.0, 0.0)  # no EXPAND line: 0 by rule

    # The same collection without dev/test questions: the routing validation fold, as the title says.
    Path(project["resources"]["sources"].collections_file).parent.joinpath("questions.jsonl").write_text(
        _jsonl(TRAIN), encoding="utf-8"
    )
    fallback = _run(project, "questions", "router_metrics")["router_metrics"]
    assert fallback["views_from"] == "validation fold, teacher labels"
    assert "no dev/test questions" in fallback["notes"]
    with duckdb.connect(str(project["db"])) as con:
        validation = con.execute(
            "SELECT count(*), count(DISTINCT qid) FROM routing_actions WHERE fold = 'validation'"
        ).fetchone()
    assert (fallback["samples"], fallback["questions"]) == validation and validation[1] == 2
    assert (
        f"Router on the validation fold ({validation[0]} views of {validation[1]} train questions)"
        in (fallback["metrics"])
    )
    row = _stored(project)["similarity"]
    assert (row["samples"], row["questions"], row["dev_test"]) == (*validation, False)
