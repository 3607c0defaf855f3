"""Question sets: the built-in set, the real sets' shapes, stable splits, bad lines reported."""

from __future__ import annotations

import json
from pathlib import Path
from pydoc_data.topics import topics

from rag_assets.core.corpus.question_sets import BUILTIN_PYTHON_REFERENCE_QUESTIONS, load_questions, stable_split


def test_builtin_questions_have_answers_in_their_gold_topic() -> None:
    questions, problems = load_questions(BUILTIN_PYTHON_REFERENCE_QUESTIONS)
    assert problems == [] and len(questions) >= 40
    for q in questions:
        assert q.gold_doc in topics, q.qid
        text = " ".join(topics[q.gold_doc].split()).lower()
        assert all(a.lower() in text for a in q.answers), q.qid
    assert {q.split for q in questions} == {"train", "dev", "test"}


def test_record_shapes_and_stable_splits(tmp_path: Path) -> None:
    file = tmp_path / "q.jsonl"
    file.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "qid": "c1",
                        "scenario": "I live in Wales.",
                        "question": "Can I apply?",
                        "answers": ["yes"],
                        "evidences": ["<p>You can apply.</p>"],
                        "not_answerable": False,
                        "doc_title": "Apply",
                    }
                ),
                json.dumps(
                    {
                        "qid": "e1",
                        "question": "How do I charge?",
                        "answer": "Plug it in.",
                        "section_path": ["Getting started", "Charge"],
                        "manual": "Galaxy_S10",
                    }
                ),
                json.dumps({"qid": "n1", "question": "who?", "answers": ["me"], "doc_title": "Who", "split": "test"}),
                "not json",
                json.dumps({"question": "no id"}),
                json.dumps({"qid": "n1", "question": "dup"}),
            ]
        )
    )
    questions, problems = load_questions(str(file))
    by_id = {q.qid: q for q in questions}
    assert by_id["c1"].query == "I live in Wales. Can I apply?"
    assert by_id["c1"].evidences == ("<p>You can apply.</p>",)
    assert by_id["e1"].answers == ("Plug it in.",) and by_id["e1"].section_path == ("Getting started", "Charge")
    assert by_id["e1"].gold_doc == "Galaxy_S10" and by_id["n1"].split == "test"
    assert by_id["c1"].split == stable_split("c1") == load_questions(str(file))[0][0].split
    assert len(problems) == 3
    assert "line 4: invalid JSON" in problems[0] and "needs 'qid'" in problems[1] and "duplicate qid" in problems[2]


def test_a_title_field_holding_the_whole_page_names_the_page_by_its_h1(tmp_path: Path) -> None:
    """Five of nq_wiki's records carry the page's token HTML as their doc_title: the gold document
    is the page titled by its <H1>, as the page's own title field says, not the whole page."""
    page = (
        "Game of Thrones ( season 7 ) - Wikipedia <H1> Game of Thrones ( season 7 ) </H1> Jump to : <P> It aired.</P>"
    )
    file = tmp_path / "q.jsonl"
    file.write_text(
        json.dumps({"qid": "nq-1", "question": "when?", "answers": ["2017"], "doc_title": page})
        + "\n"
        + json.dumps({"qid": "nq-2", "question": "who?", "answers": ["me"], "doc_title": "Game of Thrones"})
    )
    questions, problems = load_questions(str(file))
    assert problems == []
    assert [q.gold_doc for q in questions] == ["Game of Thrones ( season 7 )", "Game of Thrones"]
