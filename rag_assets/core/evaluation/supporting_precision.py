"""How often a citation marked as supporting an answer is a gold node: the precision of
`answers.supporting` (core/answering/attribution.py) against gold evidence.

A supporting citation is right when its node lies in the question's gold document and holds the
gold: a gold evidence line where the question has them, else a short gold answer (yes/no and long
answers say nothing of which node holds them: such questions are not counted, nor questions with
no gold document). The stored answers are scored as attributed when stored, and attributed again
with the current rule from what they store (question, answer, evidence, citations), so both rules
are compared on the same answers; the extractive form (a quote rests on its sentence) is apart.
Each is tallied over all counted answers and over the *right* ones (the answer holds a gold
answer): a wrong answer's support is no gold node even when one was given (the pass statement
"used to pass a value to a function" is not what the gold node says), so only the right answers'
precision reads as "a supporting citation holds the answer".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rag_assets.core.answer_metrics import contains_answer, normalize_answer
from rag_assets.core.answering.attribution import EXTRACTIVE, attribute
from rag_assets.core.answering.no_answer import NOT_FOUND_ANSWER
from rag_assets.core.answering.types import Citation, PairScorer
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.scoring import evidence_recall, is_long_answer, is_yes_no
from rag_assets.core.index.reranking.labels import is_gold_document
from rag_assets.core.store.lineage import AnswerRecord


def has_gold_node(question: Question) -> bool:
    """Whether the question's gold tells which nodes hold its answer."""
    answers = [a for a in question.answers if normalize_answer(a)]
    short = bool(answers) and not is_long_answer(answers) and not is_yes_no(answers)
    return bool(question.gold_doc) and (bool(question.evidences) or short)


def is_gold_node(question: Question, citation: Citation) -> bool:
    """The cited node lies in the gold document and holds a gold evidence line, else a gold answer."""
    title = citation.heading_path[0] if citation.heading_path else ""
    if not is_gold_document(question, citation.doc_id, title):
        return False
    if question.evidences:
        return bool(evidence_recall([citation.text], question.evidences))
    return contains_answer(citation.text, question.answers)


def citations(record: AnswerRecord) -> list[Citation]:
    """A stored answer's citations, in their stored order (the supporting ones first)."""
    return [
        Citation(doc_id, node_id, tuple(path.split(" > ")) if path else (), text, start, end)
        for doc_id, node_id, path, text, start, end in zip(
            record.cited_doc_ids,
            record.cited_node_ids,
            record.cited_heading_paths,
            record.cited_texts,
            record.cited_span_starts,
            record.cited_span_ends,
        )
    ]


@dataclass(slots=True)
class Tally:
    answers: int = 0  # answers counted (their question has a gold node)
    supported: int = 0  # of them, with at least one supporting citation
    marked: int = 0  # supporting citations
    right: int = 0  # of them, gold nodes

    def add(self, cited: list[Citation], supporting: int, question: Question) -> None:
        self.answers += 1
        self.supported += supporting > 0
        self.marked += supporting
        self.right += sum(is_gold_node(question, c) for c in cited[:supporting])

    @property
    def precision(self) -> float | None:
        return self.right / self.marked if self.marked else None


RULES = ("stored", "current", "extractive")


def supporting_precision(
    records: Iterable[AnswerRecord], questions: Mapping[str, Question], scorer: PairScorer | None = None
) -> dict[tuple[str, str], Tally]:
    """Tallies of the stored attribution (`stored`), the current rule on the same answers
    (`current`, ranked by `scorer` as the answering session ranks them: its answer scorer) and the
    extractive answers (`extractive`), over answers with a gold node (`all`) and those of them
    holding a gold answer (`right`)."""
    tallies = {(rule, which): Tally() for rule in RULES for which in ("all", "right")}
    for record in records:
        question = questions.get(record.qid)
        if (
            question is None
            or not has_gold_node(question)
            or record.supporting < 0
            or record.answer.strip() in ("", NOT_FOUND_ANSWER)
        ):
            continue
        cited = citations(record)
        kinds = ("all", "right") if contains_answer(record.answer, question.answers) else ("all",)
        for which in kinds:
            if record.attribution == EXTRACTIVE:
                tallies["extractive", which].add(cited, record.supporting, question)
                continue
            tallies["stored", which].add(cited, record.supporting, question)
            found = attribute(record.question, record.answer, record.evidence, cited, scorer=scorer)
            tallies["current", which].add([cited[i] for i in found.order], found.supporting, question)
    return tallies
