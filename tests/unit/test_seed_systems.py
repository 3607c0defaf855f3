"""Seed systems against their base: paired differences, verdicts, R4's recorded order and the
report section, on hand-made answers with hand-computed differences."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rag_assets.core.answering.types import StrategySpec
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.report import ReportData, write_report
from rag_assets.core.evaluation.scoring import ScoredAnswer, score_answers
from rag_assets.core.evaluation.seed_systems import compare_seed_systems, seed_section
from rag_assets.core.store.lineage import AnswerRecord, build_record
from tests.answer_outcomes import answer_outcome


def _record(strategy: str, qid: str, answer: str, evidence: str, order: list[int] | None = None) -> AnswerRecord:
    outcome = answer_outcome(
        f"question {qid}", answer, evidence, reader_prompt_tokens=10, reader_output_tokens=2, seconds=0.1
    )
    versions = {"retrieval": {"order": order}} if order is not None else {}
    spec = StrategySpec(strategy, "rag")
    return build_record(outcome, spec, collection="tiny", source="evaluation", versions=versions, qid=qid)


def _scores(strategy: str, metrics: dict[str, list[float]], qids: list[str]) -> list[ScoredAnswer]:
    return [ScoredAnswer(q, strategy, "", -1, {m: v[i] for m, v in metrics.items()}) for i, q in enumerate(qids)]


QIDS = ["q1", "q2", "q3", "q4"]


def test_helps_only_when_the_interval_lies_above_zero() -> None:
    records = [_record("rag-hybrid", q, "a", "e") for q in QIDS] + [_record("dota", q, "b", "f") for q in QIDS]
    scored = _scores("rag-hybrid", {"right": [1, 1, 1, 1], "f1": [0.2, 0.4, 0.5, 0.1]}, QIDS)
    scored += _scores("dota", {"right": [1, 1, 1, 1], "f1": [0.5, 0.6, 0.9, 0.3]}, QIDS)
    [dota] = compare_seed_systems(records, scored)
    assert (dota.system, dota.base, dota.questions) == ("dota", "rag-hybrid", 4)
    # per question +0.3, +0.2, +0.4, +0.2: every resampled mean lies in [0.2, 0.4]
    assert dota.differences["f1"].mean == pytest.approx(0.275)
    assert 0.2 - 1e-9 <= dota.differences["f1"].low < dota.differences["f1"].high <= 0.4 + 1e-9
    assert (dota.differences["right"].mean, dota.differences["right"].low, dota.differences["right"].high) == (
        0.0,
        0.0,
        0.0,
    )
    assert dota.verdict == "helps (token F1) on 4 questions"
    assert dota.order_changed is None and dota.identical == 0


def test_hurts_when_the_interval_lies_below_zero() -> None:
    qids = QIDS[:3]
    records = [_record("rag-hybrid", q, "a", "gold here") for q in qids]
    records += [_record("contregen", q, "a", "nothing") for q in qids]
    scored = _scores("rag-hybrid", {"passage_hit": [1, 1, 1]}, qids) + _scores(
        "contregen", {"passage_hit": [0, 0, 0]}, qids
    )
    [contregen] = compare_seed_systems(records, scored)
    hit = contregen.differences["passage_hit"]
    assert (hit.mean, hit.low, hit.high, hit.n) == (-1.0, -1.0, -1.0, 3)
    assert contregen.verdict == "hurts (passage hit) on 3 questions"


def test_no_measurable_difference_and_mixed() -> None:
    records = [_record("rag-hybrid", q, "a", "e") for q in QIDS]
    records += [_record(s, q, "b", "f") for s in ("disco", "disco-no-structure") for q in QIDS]
    scored = _scores("rag-hybrid", {"f1": [0.5, 0.5, 0.5, 0.5], "passage_hit": [1, 1, 1, 1]}, QIDS)
    # disco: +0.5, -0.5, +0.5, -0.5 on F1 (mean 0), passage hit unchanged
    scored += _scores("disco", {"f1": [1.0, 0.0, 1.0, 0.0], "passage_hit": [1, 1, 1, 1]}, QIDS)
    # disco-no-structure: F1 +0.5 on every question, passage hit -1 on every question
    scored += _scores("disco-no-structure", {"f1": [1.0, 1.0, 1.0, 1.0], "passage_hit": [0, 0, 0, 0]}, QIDS)
    disco, ablation = compare_seed_systems(records, scored)
    assert disco.differences["f1"].mean == 0.0
    assert disco.differences["f1"].low < 0.0 < disco.differences["f1"].high
    assert disco.verdict == "no measurable difference on 4 questions"
    assert ablation.differences["f1"].mean == 0.5 and ablation.differences["passage_hit"].mean == -1.0
    assert ablation.verdict == "mixed on 4 questions: helps token F1; hurts passage hit"


def test_r4_that_kept_retrieval_order_is_called_identical() -> None:
    qids = QIDS[:3]
    records = [_record("rag-hybrid", q, f"answer {q}", f"evidence {q}", [1, 2, 3]) for q in qids]
    records += [_record("rag-hybrid+r4", q, f"answer {q}", f"evidence {q}", [1, 2, 3]) for q in qids]
    scored = _scores("rag-hybrid", {"f1": [0.2, 0.7, 1.0]}, qids) + _scores(
        "rag-hybrid+r4", {"f1": [0.2, 0.7, 1.0]}, qids
    )
    [r4] = compare_seed_systems(records, scored)
    assert (r4.identical, r4.same_evidence, r4.order_changed, r4.order_recorded) == (3, 3, 0, 3)
    assert r4.verdict == "R4 kept retrieval order on 3/3 questions: same evidence, same answers"


def test_r4_order_changes_are_counted_against_rdr2() -> None:
    records = [_record("rdr2", q, "a", f"routed {q}") for q in QIDS[:2]]
    records += [
        _record("rdr2+r4", "q1", "b", "reordered q1", [2, 1, 3]),
        _record("rdr2+r4", "q2", "a", "routed q2", [1, 2, 3]),
    ]
    scored = _scores("rdr2", {"f1": [0.4, 0.6]}, QIDS[:2]) + _scores("rdr2+r4", {"f1": [0.6, 0.6]}, QIDS[:2])
    [r4] = compare_seed_systems(records, scored)
    assert (r4.system, r4.base, r4.order_changed, r4.order_recorded, r4.identical, r4.same_evidence) == (
        "rdr2+r4",
        "rdr2",
        1,
        2,
        1,
        1,
    )
    assert r4.verdict == "R4 changed the passage order on 1/2 questions: no measurable difference on 2 questions"


def test_only_shared_main_questions_are_paired_and_systems_without_base_are_left_out() -> None:
    records = [_record("rag-hybrid", q, "a", "e") for q in ("q2", "q3", "q4")]
    records += [_record("dota", q, "a", "e") for q in ("q1", "q2", "q3")]
    records += [_record("rdr2+r4", "q1", "a", "e", [1, 2])]  # no rdr2 rows: not compared
    records.append(dataclasses.replace(_record("dota", "q4", "b", "f"), grid="top_k", grid_value=1))
    scored = _scores("rag-hybrid", {"f1": [0.0, 0.0, 0.0]}, ["q2", "q3", "q4"])
    scored += _scores("dota", {"f1": [1.0, 0.5, 0.25]}, ["q1", "q2", "q3"])
    scored.append(ScoredAnswer("q4", "dota", "top_k", 1, {"f1": 1.0}))
    [dota] = compare_seed_systems(records, scored)
    assert dota.questions == 2 and dota.differences["f1"].n == 2
    assert dota.differences["f1"].mean == pytest.approx(0.375)  # (0.5 + 0.25) / 2
    assert dota.identical == 2 and dota.verdict == "same evidence, same answers on 2/2 questions"
    only_dota = [_record("rag-hybrid", "q9", "a", "e"), _record("dota", "q1", "a", "e")]
    [apart] = compare_seed_systems(only_dota, [])
    assert apart.verdict == "not comparable: no question answered by both dota and rag-hybrid"


def test_differences_from_scored_answer_texts() -> None:
    """Scores from the scoring module itself: gold '80 C'; rag-hybrid answers '100 C' (token F1
    0.5, no containment), dota '80 C' (F1 1.0, right 1.0), on both questions."""
    questions = {q: Question(q, "How hot?", answers=("80 C",), split="test") for q in ("q1", "q2")}
    records = [_record("rag-hybrid", q, "100 C", "water at 80 C") for q in questions]
    records += [_record("dota", q, "80 C", "water at 100 C") for q in questions]
    [dota] = compare_seed_systems(records, score_answers(records, questions))
    assert (dota.differences["f1"].mean, dota.differences["right"].mean, dota.differences["passage_hit"].mean) == (
        0.5,
        1.0,
        -1.0,
    )
    assert dota.verdict == "mixed on 2 questions: helps right, token F1; hurts passage hit"


def test_report_section_after_the_reader_rows_in_markdown_html_and_summary(tmp_path: Path) -> None:
    records = [_record("rag-hybrid", q, "a", "e", [1, 2]) for q in QIDS[:2]]
    records += [_record("rag-hybrid+r4", q, "a", "e", [1, 2]) for q in QIDS[:2]]
    records += [_record("contregen", "q1", "b", "f")]
    scored = _scores("rag-hybrid", {"f1": [0.5, 0.25]}, QIDS[:2]) + _scores(
        "rag-hybrid+r4", {"f1": [0.5, 0.25]}, QIDS[:2]
    )
    scored += _scores("contregen", {"f1": [0.125]}, ["q1"])
    comparisons = compare_seed_systems(records, scored)
    [(title, header, rows, plot, footnote)] = seed_section(comparisons)
    assert title == "Seed systems against their base (paired, 1/2 questions)"
    assert header == ["system", "base", "questions", "Δ token F1 (95% CI)", "R4 changed order", "verdict"]
    assert rows == [
        ["contregen", "rag-hybrid", "1", "-0.375 (-0.375–-0.375)", "", "hurts (token F1) on 1 question"],
        [
            "rag-hybrid+r4",
            "rag-hybrid",
            "2",
            "+0.000 (+0.000–+0.000)",
            "0/2",
            "R4 kept retrieval order on 2/2 questions: same evidence, same answers",
        ],
    ]
    assert plot == "" and "paired per-question difference" in footnote
    assert seed_section([]) == []

    data = ReportData(
        collection="tiny",
        run_id="r1",
        results={"rag-hybrid": {"f1": 0.375, "questions": 2.0}, "rag-hybrid+r4": {"f1": 0.375, "questions": 2.0}},
        split="test",
        questions=2,
        seed_systems=comparisons,
    )
    files = write_report(data, tmp_path / "reports")
    markdown = files.markdown.read_text()
    assert markdown.index("## Reader-based strategies") < markdown.index("## Seed systems against their base")
    assert markdown.index("## Seed systems against their base") < markdown.index("## Versions")
    assert "| rag-hybrid+r4 | rag-hybrid | 2 | +0.000 (+0.000–+0.000) | 0/2 | R4 kept retrieval order" in markdown
    assert "<h2>Seed systems against their base (paired, 1/2 questions)</h2>" in files.html.read_text()
    summary = json.loads(files.summary.read_text())
    [contregen, r4] = summary["seed_systems"]["tiny"]
    assert contregen["differences"]["f1"]["mean"] == -0.375 and r4["order_changed"] == 0
