"""Question sets: one schema for the project's own questions and the real evaluation sets.

Gold labels (answers, evidence lines, the gold section path, the gold document) are kept for
measuring, never given to retrieval or the router. Splits are a stable function of the question
id, so adding questions never moves old ones between train and test.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

BUILTIN_PYTHON_REFERENCE_QUESTIONS = "builtin:python-reference-questions"
_BUILTIN_FILE = Path(__file__).resolve().parents[2] / "data" / "python_reference_questions.jsonl"
SPLITS = ("train", "dev", "test")


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    query: str  # what retrieval and the router see (conditionalqa: scenario + question)
    answers: tuple[str, ...] = ()
    evidences: tuple[str, ...] = ()
    section_path: tuple[str, ...] = ()
    gold_doc: str = ""  # a document title, or a doc key (file name / topic) when titles are ambiguous
    not_answerable: bool = False
    split: str = "train"
    # 1-based pages of the gold document that hold the evidence (FinanceBench); () where unknown
    gold_pages: tuple[int, ...] = ()
    question_type: str = ""  # the set's own kind of question (FinanceBench: metrics-generated, ...); "" if none
    extra: dict = field(default_factory=dict, compare=False)


def stable_split(qid: str, fractions: tuple[float, float] = (0.6, 0.2)) -> str:
    """train / dev / test from a hash of the id: deterministic, independent of file order."""
    bucket = int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if bucket < fractions[0]:
        return "train"
    return "dev" if bucket < fractions[0] + fractions[1] else "test"


# Natural Questions' token HTML page: "Title - Wikipedia <H1> Title </H1> ..."
_PAGE_TITLE = re.compile(r"<H1>(.*?)</H1>", re.IGNORECASE | re.DOTALL)


def gold_title(gold_doc: str) -> str:
    """The gold document's name as written, or, where a record's title field holds the whole page
    (some Natural Questions records carry the page's token HTML there), the page's `<H1>` title."""
    page = _PAGE_TITLE.search(gold_doc)
    return " ".join(page.group(1).split()) if page else gold_doc


def question_from_record(record: dict, *, line: int, source: str, fractions: tuple[float, float]) -> Question:
    """Map any of the supported record shapes to a Question; raises ValueError naming the problem."""
    qid = str(record.get("qid") or record.get("id") or "")
    question = str(record.get("question") or "").strip()
    if not qid or not question:
        raise ValueError(f"{source} line {line}: a question record needs 'qid' and 'question'")
    scenario = str(record.get("scenario") or "").strip()
    answers = record.get("answers")
    if answers is None and record.get("answer"):
        answers = [record["answer"]]
    if isinstance(answers, str):
        answers = [answers]
    gold_doc = gold_title(
        str(record.get("gold_doc") or record.get("doc_title") or record.get("manual") or record.get("doc_name") or "")
    )
    evidences, gold_pages = _evidences(record, gold_doc, source=source, line=line)
    split = record.get("split") or stable_split(qid, fractions)
    if split not in SPLITS:
        raise ValueError(f"{source} line {line}: split {split!r} is not one of {SPLITS}")
    return Question(
        qid=qid,
        query=f"{scenario} {question}" if scenario else question,
        answers=tuple(str(a) for a in answers or ()),
        evidences=evidences,
        section_path=tuple(str(s) for s in record.get("section_path") or ()),
        gold_doc=gold_doc,
        not_answerable=bool(record.get("not_answerable", False)),
        split=split,
        gold_pages=gold_pages,
        question_type=str(record.get("question_type") or ""),
        extra={k: record[k] for k in ("answer_conditions", "url") if k in record},
    )


def _evidences(record: dict, gold_doc: str, *, source: str, line: int) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Gold evidence texts, and the gold document's evidence pages: evidence is a list of lines, or
    (FinanceBench) of `{doc_name, page, text}` records whose pages are 1-based PDF pages."""
    texts: list[str] = []
    pages: set[int] = set()
    for evidence in record.get("evidences") or record.get("evidence") or ():
        if not isinstance(evidence, dict):
            texts.append(str(evidence))
            continue
        texts.append(str(evidence.get("text") or ""))
        page = evidence.get("page")
        if page is None or str(evidence.get("doc_name") or gold_doc) != gold_doc:
            continue
        if not isinstance(page, int) or page < 1:
            raise ValueError(f"{source} line {line}: evidence page {page!r} is not a 1-based page number")
        pages.add(page)
    return tuple(t for t in texts if t), tuple(sorted(pages))


def load_questions(path: str, *, fractions: tuple[float, float] = (0.6, 0.2)) -> tuple[list[Question], list[str]]:
    """All questions of a JSONL file (or the built-in set) and the problems of the lines skipped."""
    file = _BUILTIN_FILE if path == BUILTIN_PYTHON_REFERENCE_QUESTIONS else Path(path)
    questions: list[Question] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise ValueError(f"{file} line {number}: not a JSON object")
            question = question_from_record(record, line=number, source=str(file), fractions=fractions)
        except json.JSONDecodeError as err:
            problems.append(f"{file} line {number}: invalid JSON ({err.msg})")
            continue
        except ValueError as err:
            problems.append(str(err))
            continue
        if question.qid in seen:
            problems.append(f"{file} line {number}: duplicate qid {question.qid!r}")
            continue
        seen.add(question.qid)
        questions.append(question)
    return questions, problems
