"""Whether a cited text supports an answer's content, not merely its question's words.

Asked "What does the pass statement do?", the reader answered "The pass statement is used to pass
a value to a function", and a node saying "pass is a null operation" was marked as supporting it:
they share "pass" and "statement", the question's words, and none of what the answer asserts. So
the words that count are the answer's *claim*: its content words (`STOPWORDS` dropped, a light
stem so "executes" meets "executed") that the question does not hold. A text supports the answer
when
- it holds at least `SUPPORT_SHARE` of the claim's words,
- it holds every number of the answer the question does not already say ("1.7 litres" is not
  supported by "17 litres"; "1,577" meets "1577"),
- and it does not negate what the answer asserts: in the text's sentence holding most of the claim
  and in the answer, a negation word (`NEGATIONS`, or a word ending in "n't") lies within
  `NEGATION_WINDOW` words of a shared claim word in one and not in the other ("Never immerse the
  base" does not support "Immerse the base").

A bare yes/no ("Yes.", "True") or an answer that only repeats the question asserts nothing of its
own: its claim is the question's content words, which the text must hold (same share), numbers
alike; its polarity is not checked (whether the text says yes or no to the question is what a
reader, not word matching, can tell), so such an answer may rest on a text that says the opposite.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUPPORT_SHARE = 0.5  # of the claim's words a supporting text holds
NEGATION_WINDOW = 3  # words either side of a claim word a negation is read as bearing on it
NEGATIONS = frozenset("not no never cannot without nor".split())  # noqa: SIM905
# words that say nothing of what an answer asserts about its question
_STOPWORD_TEXT = (
    "a an the of to in on at by for with from and or but not no nor never is are was were be been being it its "
    "this that these those as if then than so do does did can cannot could should would will may might must you "
    "your i we they he she them his her their our there here what which who whom when where why how about into "
    "only also very just any all each every some more most other such own same text answer evidence without "
    "has have had yes true false correct incorrect"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_WORD = re.compile(r"[^\W_]+(?:['’]t)?")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+")
# a name in code: "__new__" (its word "new" is any question's), "sort()" (claimed even where the
# question says "sorts": naming the method is the answer)
_CODE = re.compile(r"__[^\W_]\w*?__|\b[^\W\d]\w*(?=\(\))")


def stem(word: str) -> str:
    """A light stem: a plural or third-person "s" dropped, the first six letters kept."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:6]


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


def _claim_stems(text: str) -> set[str]:
    """Stems of the content words: no function word, number, single letter or contraction."""
    words = (w for w in _tokens(text) if len(w) > 1 and not w.isdigit() and not w.endswith(("n't", "n’t")))
    return {stem(w) for w in words if w not in STOPWORDS}


def _negated(tokens: list[str], claim: set[str]) -> bool:
    """Whether a negation lies within `NEGATION_WINDOW` words of a claim word in `tokens`."""
    negations = [i for i, t in enumerate(tokens) if t in NEGATIONS or t.endswith(("n't", "n’t"))]
    near = [i for i, t in enumerate(tokens) if stem(t) in claim]
    return any(abs(i - j) <= NEGATION_WINDOW for i in negations for j in near)


def _code_names(text: str) -> set[str]:
    return {m.group(0).lower() for m in _CODE.finditer(text)}


@dataclass(frozen=True, slots=True)
class Claim:
    words: frozenset[str]  # stems of what the answer asserts beyond its question
    numbers: frozenset[str]  # numbers the answer says and the question does not
    answer: str
    of_question: bool  # a yes/no or an echo: the claim is the question's (polarity unchecked)
    names: frozenset[str] = frozenset()  # names in code ("__new__"), held as they are written

    @property
    def empty(self) -> bool:
        return not self.words and not self.numbers and not self.names

    def share(self, text: str) -> float:
        """The share of the claim's words and code names `text` holds (1.0 for numbers alone)."""
        if not self.words and not self.names:
            return 1.0
        lowered = text.lower()
        held = len(self.words & {stem(t) for t in _tokens(text)}) + sum(n in lowered for n in self.names)
        return held / (len(self.words) + len(self.names))

    def supported_by(self, text: str) -> bool:
        """Whether `text` holds enough of the claim, all its numbers, and does not negate it."""
        if self.empty or self.share(text) < SUPPORT_SHARE or not self.numbers <= _numbers(text):
            return False
        return self.of_question or not self._contradicted_by(text)

    def _contradicted_by(self, text: str) -> bool:
        sentences = [_tokens(s) for s in _SENTENCE.split(text) if s.strip()]
        best = max(sentences, key=lambda s: len(self.words & {stem(t) for t in s}), default=[])
        shared = self.words & {stem(t) for t in best}
        return bool(shared) and _negated(best, set(shared)) != _negated(_tokens(self.answer), set(shared))


def claim_of(question: str, answer: str) -> Claim:
    """What `answer` asserts beyond `question` (the question's own claim for a bare yes/no)."""
    asked = _claim_stems(question)
    names = _code_names(answer) - _code_names(question)
    dunders = {n for n in names if n.startswith("__")}
    words = (_claim_stems(answer) - asked) | {stem(n) for n in names - dunders}
    words -= {stem(w) for n in dunders for w in _tokens(n)}  # "__new__" is claimed as itself
    numbers = _numbers(answer) - _numbers(question)
    if words or numbers or dunders:
        return Claim(frozenset(words), frozenset(numbers), answer, of_question=False, names=frozenset(dunders))
    return Claim(frozenset(asked), frozenset(_numbers(question)), answer, of_question=True)
