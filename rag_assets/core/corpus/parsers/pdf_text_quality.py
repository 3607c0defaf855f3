"""Whether a page's text layer is garbage: text no reader could use, to be read again by OCR.

Two kinds come out of real PDFs: the invisible text layer of a scan read by a poor OCR engine
("~;,i ' ll'l .1:.. Tlie"), and glyphs of a font without a Unicode map ("!"#$%&'" or "ÄÅÇÉÑ"
for every letter). Both fail simple statistics that hold for text in any Latin-script language,
so no dictionary (of one language) is needed (words in other scripts, a Japanese slide's
"研究の背景", pass the word test: its vowel rules are the Latin alphabet's):

- letters and digits make up most of the characters of real text (over 70% of the non-space
  characters of prose, and of a financial table: figures are digits); symbol soup falls below
  `MIN_ALNUM_SHARE`;
- most tokens are word-like: a number ("1,234", "(56)", "12.5%"), an acronym ("NYSE"), or letters
  whose vowels (a e i o u y, accented ones too) make up between `MIN_VOWELS` and `MAX_VOWELS` of
  them, with no run of more than `MAX_CONSONANT_RUN` consonants and capitals only at the start;
  garbage OCR and unmapped glyphs give fragments that are not ("lI1l", "rnmw", "ÄÅÇÉÑÖÜáàâ", "tHe").

Leaders (a contents page's "Business ........ 3", a form's "Name ________") and list markers
standing alone ("●", "–", a symbol font's private-use bullet: a slide of bullet points has one
before every few words) are left out of both statistics: they are symbols a real page repeats on
purpose. A page with fewer than
`MIN_CHARS` other characters (a figure's caption, a page number) is not judged.
"""

from __future__ import annotations

import re
import unicodedata

MIN_CHARS = 40
MIN_ALNUM_SHARE = 0.5
MIN_WORDLIKE_SHARE = 0.5
MIN_VOWELS, MAX_VOWELS = 0.2, 0.8
MAX_CONSONANT_RUN = 4
MAX_ACRONYM = 6
_VOWELS = set("aeiouy")
_NUMBER = re.compile(r"^[(\[$€£-]*[\d][\d,.:/%-]*[)\]%]*$")
_LEADERS = re.compile(r"([.·_\-–—=*])\1{2,}|(?:\. ){3,}")
_EDGE_PUNCTUATION = "\"'“”‘’()[]{}.,;:!?«»"
_BULLETS = "•◦▪●○■□‣⁃∙·*"


def _base(letter: str) -> str:
    """The letter without its accent ("é" -> "e")."""
    return unicodedata.normalize("NFKD", letter)[0].lower()


def is_wordlike(token: str) -> bool:
    """Whether a token could be a word or a number of real text (see the module's rules)."""
    core = token.strip(_EDGE_PUNCTUATION)
    if not core:
        return False
    if _NUMBER.match(core):
        return True
    if any(ch.isalpha() and "LATIN" not in unicodedata.name(ch, "") for ch in core):
        # another script (Japanese, Greek, Cyrillic): the vowel rules are the Latin alphabet's, and
        # Japanese runs words and punctuation together ("文脈、あるいは"): mostly letters is a word
        return sum(ch.isalnum() for ch in core) * 2 >= len(core)
    parts = [p for p in re.split(r"[-'’/]", core) if p]  # "non-text", "l'eau", "and/or": each part
    return bool(parts) and all(_is_word(part) for part in parts)


def _is_word(part: str) -> bool:
    if not part.isalpha():
        return False
    if part.isupper() and len(part) <= MAX_ACRONYM:
        return True  # an acronym or an initial: "SEC", "I", "A"
    if len(part) > 1 and not (part[1:].islower() or part.isupper()):
        return False  # capitals inside a word: OCR mixing "l" and "I" ("tHe", "lIl")
    if len(part) <= 2:
        return True  # "a", "of", "de"
    bases = [_base(ch) for ch in part]
    vowels = sum(ch in _VOWELS for ch in bases)
    if not MIN_VOWELS <= vowels / len(bases) <= MAX_VOWELS:
        return False
    run = longest = 0
    for ch in bases:
        run = 0 if ch in _VOWELS else run + 1
        longest = max(longest, run)
    return longest <= MAX_CONSONANT_RUN


def _list_marker(token: str) -> bool:
    """A bullet or dash standing alone: one symbol, dash or private-use glyph."""
    return len(token) == 1 and (token in _BULLETS or unicodedata.category(token) in ("So", "Pd", "Co"))


def text_is_garbage(text: str) -> bool:
    """Whether a page's text is garbage by the module's statistics (False for too little text)."""
    text = " ".join(token for token in _LEADERS.sub(" ", text).split() if not _list_marker(token))
    visible = [ch for ch in text if not ch.isspace()]
    if len(visible) < MIN_CHARS:
        return False
    alnum = sum(ch.isalnum() for ch in visible)
    if alnum / len(visible) < MIN_ALNUM_SHARE:
        return True
    tokens = text.split()
    wordlike = sum(is_wordlike(token) for token in tokens)
    return wordlike / len(tokens) < MIN_WORDLIKE_SHARE
