"""An answer cut by the reader's token limit ends on its last complete sentence.

A small reader often ignores "a few words" and writes prose; when it runs into `max_new_tokens`
the text stops mid-clause ("...and then the function is"). Such a cut answer keeps its sentences
up to the last one that ended; an answer with no ended sentence is kept whole, marked as cut.
"""

from __future__ import annotations

import re

# a sentence ends at . ! ? (optionally closed by a quote or bracket) followed by space or the end
SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
CUT_MARK = "…"


def complete_answer(text: str, output_tokens: int, max_new_tokens: int) -> str:
    """`text` unchanged unless the generation used its whole budget; then cut back to the last
    complete sentence, or marked with an ellipsis when no sentence ended."""
    text = text.strip()
    if output_tokens < max_new_tokens or not text:
        return text
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    if ends:
        return text[: ends[-1]].strip()
    if "\n" in text:  # a list: its complete items, not the one cut mid-line
        return text.rsplit("\n", 1)[0].strip()
    return text + CUT_MARK
