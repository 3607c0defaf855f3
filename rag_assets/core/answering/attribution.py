"""Which of the nodes given to the reader an answer rests on.

Every citation the reader was given is kept, but an answer lists first the ones it uses (its
citations) and the rest after them (the evidence also given), with their count stored
(`answers.supporting`). The supporting nodes are found, in this order:
1. `markers`: the reader's own `[n]` markers, n a block number of the evidence it saw (a block is
   a numbered passage or node; its citations are the nodes whose text lies in it);
2. `overlap`: the nodes holding most of the answer's content words (at least half of the best
   node's share, at most `MAX_SUPPORTING`), ranked by the scorer below for the question and
   answer together where there is one, else by their share: a short answer's few words ("yes",
   a sum, a form's name) are in several nodes, and which of them says it of the question's case
   is what the cross-encoder reads (the first of them is the answer's first citation);
3. `cross-encoder`: where no node shares a content word with the answer, the node the collection's
   trained passage reranker scores highest for the question and answer together.
An empty answer rests on nothing (`supporting` 0).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.answer_metrics import normalize_answer
from rag_assets.core.answering.types import AnswerOutcome, Citation, PairScorer

MAX_SUPPORTING = 3
MARKERS, OVERLAP, CROSS_ENCODER, EXTRACTIVE = "markers", "overlap", "cross-encoder", "extractive"
_MARKER = re.compile(r"\[(\d{1,3})\]")
_BLOCK = re.compile(r"(?m)^\[(\d+)\][ \t]")
# words that say nothing about which node an answer came from
_STOPWORD_TEXT = (
    "a an the of to in on at by for with from and or but not no is are was were be been it its this that "
    "these those as if then than so do does did can could should would will may might must you your i we "
    "they he she them his her their our there here what which who whom when where why how about into "
    "only also very just any all each every some more most other such own same text answer evidence"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@dataclass(frozen=True, slots=True)
class Attribution:
    order: tuple[int, ...]  # citation indices: the supporting ones first, then the rest as given
    supporting: int  # how many of the first `order` the answer rests on
    method: str  # MARKERS | OVERLAP | CROSS_ENCODER | '' (nothing supports it)


def content_words(text: str) -> set[str]:
    return {w for w in normalize_answer(text).split() if w not in STOPWORDS}


def evidence_blocks(evidence: str) -> dict[int, str]:
    """Block number -> its text, for evidence whose blocks start with `[n] ` lines."""
    starts = list(_BLOCK.finditer(evidence))
    return {
        int(m.group(1)): evidence[m.start() : starts[i + 1].start() if i + 1 < len(starts) else len(evidence)]
        for i, m in enumerate(starts)
    }


def _by_markers(answer: str, evidence: str, citations: Sequence[Citation]) -> list[int]:
    blocks = evidence_blocks(evidence)
    cited: list[int] = []
    for number in dict.fromkeys(int(m.group(1)) for m in _MARKER.finditer(answer)):
        block = blocks.get(number)
        if block is None:
            continue
        cited += [i for i, c in enumerate(citations) if c.text.strip() and c.text.strip() in block and i not in cited]
    return cited


def _by_overlap(question: str, answer: str, citations: Sequence[Citation], scorer: PairScorer | None) -> list[int]:
    words = content_words(answer)
    if not words:
        return []
    shares = [len(words & content_words(c.text)) / len(words) for c in citations]
    best = max(shares, default=0.0)
    if best <= 0:
        return []
    found = [i for i, s in enumerate(shares) if s >= best / 2]
    rank = {i: -shares[i] for i in found}
    if scorer is not None and len(found) > 1:
        scores = scorer.scores(f"{question} {answer}".strip(), [citations[i].text for i in found])
        rank = {i: -score for i, score in zip(found, scores)}
    return sorted(found, key=lambda i: (rank[i], i))[:MAX_SUPPORTING]


def _by_cross_encoder(question: str, answer: str, citations: Sequence[Citation], scorer: PairScorer) -> list[int]:
    scores = scorer.scores(f"{question} {answer}".strip(), [c.text for c in citations])
    return [max(range(len(citations)), key=lambda i: scores[i])]


def attribute(
    question: str,
    answer: str,
    evidence: str,
    citations: Sequence[Citation],
    *,
    scorer: PairScorer | None = None,
) -> Attribution:
    """The citations `answer` rests on, first, and how they were found."""
    supporting: list[int] = []
    method = ""
    if answer.strip() and citations:
        for name, found in (
            (MARKERS, lambda: _by_markers(answer, evidence, citations)),
            (OVERLAP, lambda: _by_overlap(question, answer, citations, scorer)),
            (CROSS_ENCODER, lambda: _by_cross_encoder(question, answer, citations, scorer) if scorer else []),
        ):
            supporting = found()
            if supporting:
                method = name
                break
    rest = [i for i in range(len(citations)) if i not in supporting]
    return Attribution(tuple(supporting + rest), len(supporting), method)


def reordered(citations: Sequence[Citation], attribution: Attribution) -> list[Citation]:
    return [citations[i] for i in attribution.order]


def attribute_outcome(outcome: AnswerOutcome, scorer: PairScorer | None) -> AnswerOutcome:
    """The citations the answer rests on listed first (`supporting` of them), the rest after."""
    found = attribute(outcome.question, outcome.answer, outcome.evidence, outcome.citations, scorer=scorer)
    outcome.citations = reordered(outcome.citations, found)
    outcome.supporting, outcome.attribution = found.supporting, found.method
    return outcome
