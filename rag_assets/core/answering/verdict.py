"""A yes or no before a quote, where the question asks for one.

A quote cannot say yes or no: asked "I live in Wales. Can I apply?", the extractive answer is the
sentence of the evidence that best answers it, which a person reads and judges, but whose verdict
nobody stated, so it is never right against a yes/no gold answer (ConditionalQA's, half its
questions). The reader, asked the same question over the same evidence, says yes or no fluently
and is right more often for that reason alone. So a quote answering a yes/no question starts with
the reader's verdict: "Yes" or "No", whichever the reader finds the more likely start of its reply
to the reader's own prompt over the evidence (one scoring pass, no generation: the reader cannot
wander off), then the quote it rests on. An engine that cannot score continuations leaves the quote
as it is.

A question asks for a yes or no when its own sentence (the last one ending in "?", after any
scenario) starts with an auxiliary verb: "Can I ...?", "Is it ...?", "Do I need ...?".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_assets.core.answering.reader_prompts import reader_messages
from rag_assets.core.engines.base import LLMEngine

VERDICTS = ("Yes", "No")
# what such an answer says it is (the answer's note, the page and `rag ask`)
VERDICT_NOTE = "extractive: the reader's yes or no, then the best sentence of the evidence"
AUXILIARIES = frozenset(
    "am is are was were do does did can could will would shall should may might must has have had".split()  # noqa: SIM905
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+")
_FIRST_WORD = re.compile(r"[A-Za-z]+(?:['’]t)?")


def asks_yes_no(question: str) -> bool:
    """Whether the question's own sentence (its last question, after any scenario) starts with an
    auxiliary verb, as a question answered by yes or no does."""
    sentences = [s for s in _SENTENCES.split(question.strip()) if s.strip()]
    asked = [s for s in sentences if s.rstrip().endswith("?")]
    sentence = (asked or sentences or [""])[-1]
    first = _FIRST_WORD.search(sentence)
    if first is None:
        return False
    word = first.group(0).lower().replace("’", "'")
    return word.removesuffix("n't") in AUXILIARIES or word in ("can't", "won't", "shan't")


def yes_no_verdicts(
    engine: LLMEngine, questions: Sequence[str], evidences: Sequence[str], style: str = "short"
) -> list[str | None]:
    """Per question, "Yes" or "No": the more likely start of the reader's reply over its evidence
    (None for all where the engine cannot score continuations)."""
    if not questions:
        return []
    chats = [reader_messages(q, e, style) for q, e in zip(questions, evidences)]
    try:
        scores = engine.score_continuations(chats, [list(VERDICTS)] * len(chats))
    except NotImplementedError:
        return [None] * len(questions)
    return [VERDICTS[0] if yes >= no else VERDICTS[1] for yes, no in scores]


def with_verdict(verdict: str | None, quote: str) -> str:
    """The quote after its verdict ("Yes. <quote>"), or the quote alone without one."""
    return f"{verdict}. {quote}" if verdict and quote else quote
