"""Which passages are gold for a question, and the reranker's training groups built from them."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Sequence

from rag_assets.core.answer_metrics import normalize_answer
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.index.passages import Passage
from rag_assets.core.index.retrieval import SearchHit
from rag_assets.core.index.vector_index import search_text
from rag_assets.core.training.contrastive import ContrastivePair

_TAG = re.compile(r"<[^>]+>")
_YES_NO = {"yes", "no"}

# One training group: the query, one gold passage and its hard negatives (search texts).
RerankGroup = ContrastivePair


def is_gold_document(question: Question, doc_id: str, title: str) -> bool:
    """The passage's document is the question's gold document: by title (nq_wiki, conditionalqa,
    synthetic questions), doc key (`<collection>/<key>`: the built-in reference) or file stem
    (`emanual/<manual>.json`)."""
    gold = question.gold_doc.strip()
    if not gold:
        return False
    if gold.casefold() == title.strip().casefold() or doc_id == gold:
        return True
    tail = doc_id.rsplit("/", 1)[-1]
    return tail == gold or tail.rsplit(".", 1)[0] == gold


def _under(heading_path: Sequence[str], section: Sequence[str]) -> bool:
    # heading_path[0] is the document title (the tree root); the sections follow
    path = [p.casefold() for p in heading_path[1 : 1 + len(section)]]
    return path == [s.casefold() for s in section]


def is_gold_hit(question: Question, doc_id: str, heading_path: Sequence[str]) -> bool:
    """What retrieval recall counts: a hit from the gold document (under the gold section, when
    the question has one, as for the e-manuals)."""
    if not is_gold_document(question, doc_id, heading_path[0] if heading_path else ""):
        return False
    return _under(heading_path, question.section_path) if question.section_path else True


def _clean(text: str) -> str:
    return " ".join(_TAG.sub(" ", text).split())


def is_gold_passage(question: Question, passage: Passage | SearchHit) -> bool:
    """Gold document, and the finest label the question has: section, evidence line, short answer
    (a stored passage or a search hit of one)."""
    title = passage.heading_path[0] if passage.heading_path else ""
    if not is_gold_document(question, passage.doc_id, title):
        return False
    if question.section_path:
        return _under(passage.heading_path, question.section_path)
    if question.evidences:
        text = _clean(passage.text)
        return any(_clean(e) and _clean(e) in text for e in question.evidences)
    answers = [a for a in question.answers if normalize_answer(a) and normalize_answer(a) not in _YES_NO]
    if answers:
        text = normalize_answer(passage.text)
        return any(normalize_answer(a) in text for a in answers)
    return True


def passage_text(passage: Passage) -> str:
    """What the reranker reads: the passage as the index stores it for search (heading path + text)."""
    return search_text(passage.heading_path, passage.text)


def _strip_query(text: str, query: str) -> str:
    return " ".join(text.replace(query, " ").split()) if len(query) > 20 and query in text else text


def rerank_groups(
    questions: Sequence[Question],
    passages: Sequence[Passage],
    candidates: Callable[[str], Sequence[str]],
    *,
    negatives: int = 3,
    seed: int = 0,
) -> list[RerankGroup]:
    """One group per question that has a gold passage: the first gold passage among its search
    candidates (else the first gold passage of the collection), against up to `negatives`
    non-gold candidates (topped up with random non-gold passages)."""
    rng = random.Random(seed)
    by_id = {p.passage_id: p for p in passages}
    groups: list[RerankGroup] = []
    for question in questions:
        gold = [p for p in passages if is_gold_passage(question, p)]
        if not gold or len(gold) == len(passages):
            continue
        gold_ids = {p.passage_id for p in gold}
        ranked = [by_id[i] for i in candidates(question.query) if i in by_id]
        positive = next((p for p in ranked if p.passage_id in gold_ids), gold[0])
        hard = [p for p in ranked if p.passage_id not in gold_ids][:negatives]
        while len(hard) < negatives:
            extra = rng.choice(passages)
            if extra.passage_id not in gold_ids and extra not in hard:
                hard.append(extra)
            elif len(passages) - len(gold_ids) <= len(hard):
                break
        if len(hard) < negatives:
            continue
        groups.append(
            RerankGroup(
                question.query,
                _strip_query(passage_text(positive), question.query),
                tuple(passage_text(p) for p in hard),
            )
        )
    return groups


def held_out(questions: Sequence[Question], fraction: float) -> tuple[list[Question], list[Question]]:
    """(train, held-out): a stable split by question id, so retraining never moves a question."""
    train, kept = [], []
    for q in questions:
        bucket = int(hashlib.sha256(f"rerank:{q.qid}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (kept if bucket < fraction else train).append(q)
    return train, kept
