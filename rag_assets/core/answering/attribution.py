"""Which of the nodes given to the reader an answer rests on.

Every citation the reader was given is kept, but an answer lists first the ones it uses (its
citations) and the rest after them (the evidence also given), with their count stored
(`answers.supporting`). A node supports the answer only when it holds what the answer asserts,
not merely the question's words (core/answering/support.py: the answer's content words beyond
the question, its numbers, no negation one says and the other does not). The supporting nodes
are found, in this order:
1. `markers`: the reader's own `[n]` markers, n a block number of the evidence it saw (a block is
   a numbered passage or node; its citations are the nodes whose text lies in it), kept where the
   node passes the same content test;
2. `overlap`: the nodes passing the content test that hold nearly as much of the claim as the best
   of them (`NEAR_BEST` of its share; at most `MAX_SUPPORTING`), ranked by the scorer
   for the question and answer together where there is one, else by the share of the claim they
   hold: which of several nodes holding a short answer says it of the question's case is what
   the cross-encoder reads (the first of them is the answer's first citation).
No node passing the test: the answer rests on none (`supporting` 0, attribution `unsupported`);
the scorer never makes a node supporting on its own (`cross-encoder`: rows stored before this
rule). An empty answer rests on nothing (`supporting` 0, attribution ''). An extractive answer, a
quote, rests on the node it was quoted from (core/answering/extractive.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.answering.support import Claim, claim_of
from rag_assets.core.answering.types import AnswerOutcome, Citation, PairScorer

MAX_SUPPORTING = 3
NEAR_BEST = 0.75  # of the best node's share of the claim, a supporting node holds at least
MARKERS, OVERLAP, CROSS_ENCODER, EXTRACTIVE = "markers", "overlap", "cross-encoder", "extractive"
UNSUPPORTED = "unsupported"  # no given node holds what the answer asserts
_MARKER = re.compile(r"\[(\d{1,3})\]")
_BLOCK = re.compile(r"(?m)^\[(\d+)\][ \t]")


@dataclass(frozen=True, slots=True)
class Attribution:
    order: tuple[int, ...]  # citation indices: the supporting ones first, then the rest as given
    supporting: int  # how many of the first `order` the answer rests on
    method: str  # MARKERS | OVERLAP | UNSUPPORTED | '' (an empty answer)


def evidence_blocks(evidence: str) -> dict[int, str]:
    """Block number -> its text, for evidence whose blocks start with `[n] ` lines."""
    starts = list(_BLOCK.finditer(evidence))
    return {
        int(m.group(1)): evidence[m.start() : starts[i + 1].start() if i + 1 < len(starts) else len(evidence)]
        for i, m in enumerate(starts)
    }


def _by_markers(answer: str, evidence: str, citations: Sequence[Citation], claim: Claim) -> list[int]:
    blocks = evidence_blocks(evidence)
    cited: list[int] = []
    for number in dict.fromkeys(int(m.group(1)) for m in _MARKER.finditer(answer)):
        block = blocks.get(number)
        if block is None:
            continue
        cited += [i for i, c in enumerate(citations) if c.text.strip() and c.text.strip() in block and i not in cited]
    return [i for i in cited if claim.supported_by(citations[i].text)]


def _by_content(question: str, answer: str, citations: Sequence[Citation], claim: Claim, scorer: PairScorer | None):
    shares = {i: claim.share(c.text) for i, c in enumerate(citations) if claim.supported_by(c.text)}
    best = max(shares.values(), default=0.0)
    found = [i for i, share in shares.items() if share >= NEAR_BEST * best]
    rank = {i: -shares[i] for i in found}
    if scorer is not None and len(found) > 1:
        scores = scorer.scores(f"{question} {answer}".strip(), [citations[i].text for i in found])
        rank = {i: -score for i, score in zip(found, scores)}
    return sorted(found, key=lambda i: (rank[i], i))[:MAX_SUPPORTING]


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
        claim = claim_of(question, _MARKER.sub(" ", answer))
        supporting, method = _by_markers(answer, evidence, citations, claim), MARKERS
        if not supporting:
            supporting, method = _by_content(question, answer, citations, claim, scorer), OVERLAP
        method = method if supporting else UNSUPPORTED
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
