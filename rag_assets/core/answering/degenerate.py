"""A reader's text that is no answer: a phrase looping, or list numbering with no item.

A small reader that has nothing to say sometimes loops ("The answer is: The answer is: The
answer is: ...") or writes the numbers of a list it never fills ("1. 1. 1. 2. 3. 4." for an
off-topic question, "1.1.1 2.2.1 3.3.1"). Neither is an answer, and shown as one it reads as
garbage. `cut_loop` keeps a looping text up to its first repeat (an answer followed by a loop
keeps the answer); `only_list_markers` says a text has nothing but numbering, which is then no
answer at all (the caller answers from the evidence instead, or says nothing).
"""

from __future__ import annotations

import re

LOOP_REPEATS = 3  # a phrase said this many times in a row is a loop ("very very" is not)
MAX_LOOP_WORDS = 8  # the longest phrase looked for

_TOKEN = re.compile(r"\S+")
# "1." "2)" "iv." and section numbers "1.1.1" (two dots at least: "0.66" is a figure, not numbering)
_MARKER = re.compile(r"(?:\d{1,3}|[ivx]{1,4}|[a-z])[.)]|\d+(?:\.\d+){2,}\.?|[-*•–]", re.IGNORECASE)


def _normal(token: str) -> str:
    return token.lower().strip(".,;:!?\"'")


def cut_loop(text: str) -> str:
    """`text` up to the second time a phrase of 1 to MAX_LOOP_WORDS words starts a run of
    LOOP_REPEATS consecutive repeats (the first saying kept); `text` as it is without such a run."""
    tokens = list(_TOKEN.finditer(text))
    words = [_normal(t.group(0)) for t in tokens]
    for start in range(len(words)):
        for size in range(1, MAX_LOOP_WORDS + 1):
            end = start + size * LOOP_REPEATS
            if end > len(words):
                break
            phrase = words[start : start + size]
            if any(phrase) and all(
                words[start + k * size : start + (k + 1) * size] == phrase for k in range(1, LOOP_REPEATS)
            ):
                return text[: tokens[start + size].start()].rstrip()
    return text


def before_a_repeat(text: str) -> str:
    """`text` up to where its end might be the start of a loop: the first word from which the rest
    repeats, period by period, the 1 to MAX_LOOP_WORDS words before it. A stream sends only this
    much, so a loop `cut_loop` removes later was never sent."""
    tokens = list(_TOKEN.finditer(text))
    words = [_normal(t.group(0)) for t in tokens]
    for start in range(1, len(words)):
        rest = words[start:]
        for size in range(1, min(MAX_LOOP_WORDS, start) + 1):
            period = words[start - size : start]
            if any(period) and all(word == period[i % size] for i, word in enumerate(rest)):
                return text[: tokens[start].start()].rstrip()
    return text


def only_list_markers(text: str) -> bool:
    """Whether `text` is list numbering or bullets and nothing else ("1. 1. 2. 3.", "1.1.1 2.2.1")."""
    tokens = _TOKEN.findall(text)
    return bool(tokens) and all(_MARKER.fullmatch(t) for t in tokens)
