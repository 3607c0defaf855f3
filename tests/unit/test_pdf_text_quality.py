"""A page's text layer is judged garbage (to be read again by OCR) by simple statistics, on
examples written by hand: real prose, a financial table, code, French, Greek, Japanese, a slide
of bullet points and a formula pass;
symbol soup from a poor OCR engine and unmapped glyphs do not."""

from __future__ import annotations

import pytest

from rag_assets.core.corpus.parsers.pdf_text_quality import is_wordlike, text_is_garbage

pytestmark = pytest.mark.unit

GOOD = {
    "prose": "The Company's revenue grew 12% in fiscal 2018, driven by strong demand in Asia and the NYSE listing.",
    "table": "Net sales $ 32,765 $ 31,657 (1,234) 12.5% 2018 2017 2016 Total assets 36,500 37,987",
    "french": "Le plan local d'urbanisme fixe les règles de construction pour l'ensemble de la commune.",
    "code": "def read(path): return open(path).read() if path.exists() else None  # a comment here",
    "contents": "PART I Page ITEM 1. Business .............................. 3 ITEM 1A. Risk Factors "
    ". . . . . . . . . . . . . . . 15 Name ____________________ Date ______________",
    "formula": "Let f : X → Y be continuous and a, b ∈ R with a < b; then f(a) + f(b) is defined on [a, b].",
    # a Japanese slide's text layer (pdfminer's nlp2004slides.pdf, p. 2): no spaces, no Latin vowels
    "japanese": "2 研究の背景 • 固有表現抽出： - 文脈、あるいは字句的な知識をもちい て、文章中に現れる固有表現をタグ付け "
    "する。 - コーパスや辞書からあらかじめ学習（発 見）しておく方法が主流。",
    "greek": "Η εταιρεία αύξησε τα έσοδά της κατά 12% το 2018 χάρη στη ζήτηση στην Ασία.",
    # a slide of bullet points (docling's odf_presentation_01.odp.pdf, p. 1): a marker every few words
    "bullets": "Test Table Slide ● Class1 ● Class2 ● A merged with B ● C ● A ● B ● C ● R1 ● True ● False "
    "● False ● True ● True ● R2 ● True ● False ● R3 ● False ● False ● True ● True ● R4 ● False",
}
GARBAGE = {
    "symbol soup of a poor scan's OCR": "~;,i ' ll'l .1:.. ,i ~~ '' ;: .:. l1' ,,. ~:; i'l .;, |!| ^^ ,.'",
    "fragments of a poor scan's OCR": "tHe lIl rnmw cqxz bvrt lIlI tlie xkcd jjjj ttnnrr wwww gvhdj qqqq frrst",
    "glyphs without a Unicode map": "ÄÅÇÉÑÖÜáàâäãåçéèêëíìîïñóòôöõúùûü ÄÅÇÉÑÖÜá àâäãåçéèêëíì îïñóòôöõúùûü",
    "punctuation for letters": "!\"#$%&'()*+,-./ !\"#$%&'()* +,-./:;<=>? @[\\]^_`{|}~ !\"#$%&'( )*+,-./",
}


@pytest.mark.parametrize("text", GOOD.values(), ids=GOOD.keys())
def test_real_text_is_not_garbage(text: str) -> None:
    assert not text_is_garbage(text)


@pytest.mark.parametrize("text", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_text_is_garbage(text: str) -> None:
    assert text_is_garbage(text)


def test_too_little_text_is_not_judged() -> None:
    assert not text_is_garbage("~;,i ' ll'l .1:..")  # a page number or a caption: too few characters


@pytest.mark.parametrize(
    ("token", "wordlike"),
    [
        ("organized.", True),
        ("non-text-searchable", True),
        ("(1,234)", True),
        ("SEC", True),
        ("a,", True),
        ("rnmw", False),  # no vowel
        ("tHe", False),  # a capital inside a word
        ("abcdfghe", False),  # a run of six consonants
        ("aeiou", False),  # vowels only
        ("l1l", False),  # digits inside letters
    ],
)
def test_wordlike_tokens(token: str, wordlike: bool) -> None:
    assert is_wordlike(token) is wordlike
