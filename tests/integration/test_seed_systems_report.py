"""`evaluation_report` materialized for real on stored answers (no models): the seed-systems section
pairs each seed system with its base and reads R4's recorded order from the answers."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from rag_assets.core.answering.types import AnswerOutcome, StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.lineage import build_record, store_answers
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.question_table import questions_table
from rag_assets.defs.evaluation.evaluation_report import evaluation_report
from rag_assets.defs.partitions import register_collections
from tests.answer_outcomes import answer_outcome


def _outcome(question: str, answer: str, evidence: str) -> AnswerOutcome:
    return answer_outcome(question, answer, evidence, reader_prompt_tokens=50, reader_output_tokens=5, seconds=0.5)


def test_report_judges_seed_systems_against_their_base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "data"))
    db = tmp_path / "catalogue.duckdb"
    questions = [Question(q, "How hot for green tea?", answers=("80 C",), split="test") for q in ("e1", "e2")]
    rows = []
    for q in questions:
        # rag-hybrid and its R4 row: the same order, evidence and answer ('100 C': F1 0.5, right 0)
        for name, reorder, order in (("rag-hybrid", "retrieval", [1, 2]), ("rag-hybrid+r4", "learned", [1, 2])):
            rows.append(
                build_record(
                    _outcome(q.query, "100 C", "tea at 80 C | kettle"),
                    StrategySpec(name, "rag", reorder=reorder),
                    collection="tiny",
                    source="evaluation",
                    versions={"retrieval": {"order": order}},
                    run_id="r1",
                    qid=q.qid,
                )
            )
        # dota answers right (F1 1.0, right 1) from evidence without the answer (passage hit 0)
        rows.append(
            build_record(
                _outcome(q.query, "80 C", "kettle only"),
                StrategySpec("dota", "dota"),
                collection="tiny",
                source="evaluation",
                versions={"retrieval": {"order": [1]}},
                run_id="r1",
                qid=q.qid,
            )
        )
    with duckdb.connect(str(db)) as con:
        replace_collection(con, "tiny", {"questions": questions_table("tiny", questions)})
        store_answers(con, rows, replace=("tiny", "evaluation"))
    instance = dg.DagsterInstance.ephemeral()
    register_collections(instance, ["tiny"])
    result = dg.materialize(
        [evaluation_report],
        resources={"catalogue": DuckDBResource(database=str(db))},
        partition_key="tiny",
        instance=instance,
    )
    assert result.success
    [event] = result.get_asset_materialization_events()
    meta = event.materialization.metadata
    markdown = Path(meta["report_markdown"].value).read_text()
    section = markdown[markdown.index("## Seed systems against their base (paired, 2 questions)") :]
    assert section.index("| dota |") < section.index("| rag-hybrid+r4 |")  # the seed systems' order
    assert (
        "| dota | rag-hybrid | 2 | +1.000 (+1.000–+1.000) | +0.500 (+0.500–+0.500) | -1.000 (-1.000–-1.000) |  | "
        "mixed on 2 questions: helps right, token F1; hurts passage hit |" in section
    )
    assert (
        "| rag-hybrid+r4 | rag-hybrid | 2 | +0.000 (+0.000–+0.000) | +0.000 (+0.000–+0.000) | +0.000 (+0.000–+0.000) "
        "| 0/2 | R4 kept retrieval order on 2/2 questions: same evidence, same answers |" in section
    )
    html = Path(meta["report_html"].value).read_text()
    assert "<h2>Seed systems against their base (paired, 2 questions)</h2>" in html
    summary = json.loads(Path(meta["summary_json"].value).read_text())
    assert [c["system"] for c in summary["seed_systems"]["tiny"]] == ["dota", "rag-hybrid+r4"]
