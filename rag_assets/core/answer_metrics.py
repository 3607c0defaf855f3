"""Answer and evidence metrics, as the QA literature computes them.

Normalisation (SQuAD style): lower-case, drop punctuation and the articles a/an/the, collapse
spaces. Containment is word-boundary aware ("10" is not found in "100"). ROUGE-L comes from the
`rouge-score` library rather than a hand-written LCS.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache, lru_cache

from rag_assets.core.text import word_count as word_count  # re-exported: the answer metrics' word count

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({ch: " " for ch in string.punctuation + "‘’“”–—"})


@lru_cache(maxsize=1 << 14)
def normalize_answer(text: str) -> str:
    # Cached: the oracle teacher normalises every content node of a document for each routing
    # view of each question (emanual's 734 stored views: 17.9 s of labelling without the cache).
    # Bounded to a few documents' nodes, so a long-lived process holds tens of MB at most.
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def contains_answer(text: str, answers: Iterable[str]) -> bool:
    """Any gold answer occurs in `text` after normalisation, on word boundaries."""
    haystack = f" {normalize_answer(text)} "
    return any((needle := normalize_answer(a)) and f" {needle} " in haystack for a in answers)


def token_f1(prediction: str, answers: Iterable[str]) -> float:
    """Best token-level F1 against any gold answer."""
    predicted = normalize_answer(prediction).split()
    best = 0.0
    for answer in answers:
        gold = normalize_answer(answer).split()
        if not predicted or not gold:
            best = max(best, float(predicted == gold))
            continue
        common = sum((Counter(predicted) & Counter(gold)).values())
        if common:
            precision, recall = common / len(predicted), common / len(gold)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def yes_no(text: str) -> str | None:
    """The yes/no verdict a free-text answer starts with, if any."""
    words = normalize_answer(text).split()
    return words[0] if words and words[0] in ("yes", "no") else None


def yes_no_correct(prediction: str, answers: Sequence[str]) -> bool | None:
    """None when the gold answer is not a yes/no answer (the metric does not apply)."""
    gold = {normalize_answer(a) for a in answers} & {"yes", "no"}
    if not gold:
        return None
    return yes_no(prediction) in gold


@cache
def _rouge_l_scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, answers: Iterable[str]) -> float:
    scorer = _rouge_l_scorer()
    return max((scorer.score(answer, prediction)["rougeL"].fmeasure for answer in answers), default=0.0)


def answer_right(prediction: str, answers: Sequence[str]) -> bool | None:
    """Whether an answer is right: for yes/no gold answers, when its verdict matches (a quote that
    says neither yes nor no is not right); for other gold answers, when it contains one of them
    after normalisation. None when there is no gold answer to judge by."""
    golds = [a for a in answers if normalize_answer(a)]
    if not golds:
        return None
    verdict = yes_no_correct(prediction, golds)
    if verdict is not None:
        return verdict
    return contains_answer(prediction, golds)
