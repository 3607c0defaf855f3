"""Query rewriting (DoTA-RAG's first step): the LLM turns a question into a retrieval query.

The prompt lives here and only here. All questions of a batch are rewritten in ONE engine call
(any engine: transformers, vLLM, an OpenAI-compatible server). The rewrite is a search query,
not an answer: a short line of keywords. A rewrite that is empty, a refusal, far too long, or
shares no word with the question (a small model drifting off) falls back to the original
question, and `RewriteResult.kept_original` says which did; the original query and its rewrite
are both kept in the answer's lineage. With the 135M default model the rewrite can hurt
retrieval: it is a knob (`rewrite` of a strategy), never forced.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.engines.base import ChatMessages, LLMEngine

REWRITE_SYSTEM = (
    "You rewrite questions into search queries for a document search engine. Reply with one line: "
    "the key terms of the question (names, objects, actions), about 5 to 12 words, no answer, no "
    "explanation."
)
REWRITE_MAX_NEW_TOKENS = 32
_WORD = re.compile(r"\w+", re.UNICODE)
_REFUSAL = re.compile(r"\b(i cannot|i can't|i'm sorry|as an ai|i don't know)\b", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(search\s+)?query\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RewriteResult:
    query: str  # what retrieval searches with
    original: str
    raw: str  # the model's output, as generated
    kept_original: bool  # the rewrite was unusable: retrieval uses the original question
    prompt_tokens: int = 0
    output_tokens: int = 0


def rewrite_messages(question: str) -> ChatMessages:
    return [
        {"role": "system", "content": REWRITE_SYSTEM},
        {"role": "user", "content": f"Question: {question}\nSearch query:"},
    ]


def clean_rewrite(question: str, raw: str, *, max_words: int = 40) -> str | None:
    """The usable search query in `raw`, or None when it is unusable (see module doc)."""
    line = next((ln for ln in raw.strip().splitlines() if ln.strip()), "")
    line = _LABEL.sub("", line).strip().strip("\"'").strip()
    words = _WORD.findall(line.lower())
    if not words or len(words) > max_words or _REFUSAL.search(line):
        return None
    if not set(words) & set(_WORD.findall(question.lower())):
        return None
    return line


def rewrite_queries(
    engine: LLMEngine, questions: Sequence[str], *, max_new_tokens: int = REWRITE_MAX_NEW_TOKENS
) -> list[RewriteResult]:
    """One rewrite per question, all in one engine call."""
    questions = list(questions)
    if not questions:
        return []
    generations = engine.generate([rewrite_messages(q) for q in questions], max_new_tokens=max_new_tokens)
    out = []
    for question, generation in zip(questions, generations):
        cleaned = clean_rewrite(question, generation.text)
        out.append(
            RewriteResult(
                query=cleaned or question,
                original=question,
                raw=generation.text,
                kept_original=cleaned is None,
                prompt_tokens=generation.prompt_tokens,
                output_tokens=generation.output_tokens,
            )
        )
    return out
