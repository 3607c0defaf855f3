"""The report's answer-forms section: each extractive row paired with its generated row, and the
collection's default form with how it was chosen, on hand-made answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag_assets.core.answering.policy.default_form import FormChoice
from rag_assets.core.evaluation.answer_forms import FORM_BASES, FORM_METRICS, AnswerForms, forms_section
from rag_assets.core.evaluation.report import ReportData, write_report
from rag_assets.core.evaluation.seed_systems import compare_seed_systems
from tests.unit.test_seed_systems import _record, _scores

pytestmark = pytest.mark.unit

QIDS = ["q1", "q2", "q3"]
CHOICE = FormChoice("extractive", 2, 4, 6, (-0.67, 0.0))


def _comparisons():
    records = [_record(s, q, f"{s} answer", "same evidence") for s in ("rdr2", "rdr2-extractive") for q in QIDS]
    records += [_record("rag-hybrid", q, "generated", "e") for q in QIDS]  # no extractive row: not paired
    scored = _scores("rdr2", {"right": [1, 0, 1], "f1": [0.5, 0.0, 0.4], "first_cite_gold": [1, 0, 0]}, QIDS)
    scored += _scores(
        "rdr2-extractive", {"right": [0, 0, 1], "f1": [0.25, 0.0, 0.4], "first_cite_gold": [1, 1, 0]}, QIDS
    )
    return compare_seed_systems(records, scored, FORM_BASES, FORM_METRICS)


def test_extractive_rows_paired_with_their_generated_rows() -> None:
    [rdr2] = _comparisons()
    assert (rdr2.system, rdr2.base, rdr2.questions) == ("rdr2-extractive", "rdr2", 3)
    # per question: em -1, 0, 0; f1 -0.25, 0, 0; first cite gold 0, +1, 0
    assert rdr2.differences["right"].mean == pytest.approx(-1 / 3)
    assert rdr2.differences["f1"].mean == pytest.approx(-0.25 / 3)
    assert rdr2.differences["first_cite_gold"].mean == pytest.approx(1 / 3)
    [(title, header, rows, plot, footnote)] = forms_section(AnswerForms([rdr2], CHOICE))
    assert title == "Answer forms: extractive against generated" and plot == ""
    assert header == [
        "extractive row",
        "generated row",
        "questions",
        "Δ right (95% CI)",
        "Δ token F1 (95% CI)",
        "Δ first cite gold (95% CI)",
        "verdict",
    ]
    assert rows[0][:3] == ["rdr2-extractive", "rdr2", "3"]
    assert rows[0][-1].endswith("(same evidence on every question: only the reader's output differs)")
    assert (
        "answers **extractive** by default: a quote of the evidence: on 6 validation questions the reader's answer "
        "was right 2 times, the quote 4; the reader is not right more often beyond noise" in footnote
    )
    assert forms_section(AnswerForms([], CHOICE)) == []


def test_section_in_the_report_and_summary(tmp_path: Path) -> None:
    data = ReportData(
        collection="tiny",
        run_id="r1",
        results={"rdr2": {"f1": 0.3, "questions": 3.0}, "rdr2-extractive": {"f1": 0.2, "questions": 3.0}},
        split="test",
        questions=3,
        answer_forms=AnswerForms(_comparisons(), CHOICE),
    )
    files = write_report(data, tmp_path / "reports")
    markdown = files.markdown.read_text()
    assert (
        markdown.index("## Reader-based strategies") < markdown.index("## Answer forms") < markdown.index("## Versions")
    )
    assert "| rdr2-extractive | rdr2 | 3 |" in markdown
    assert "answers **extractive** by default" in markdown
    summary = json.loads(files.summary.read_text())["answer_forms"]["tiny"]
    assert summary["default"] == "extractive" and summary["choice"]["questions"] == 6
    assert summary["paired"][0]["differences"]["f1"]["mean"] == pytest.approx(-0.25 / 3)


def test_default_form_line_when_nothing_was_measured() -> None:
    [(_, _, _, _, footnote)] = forms_section(AnswerForms(_comparisons(), None))
    assert "default form was not measured (`answer_policy` has not run): answers are extractive" in footnote
    [(_, _, _, _, footnote)] = forms_section(AnswerForms(_comparisons(), FormChoice("extractive", 0, 0, 0)))
    assert "no validation question with a gold answer" in footnote
