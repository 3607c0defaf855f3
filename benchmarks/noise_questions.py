"""Writes the packaged noise questions (rag_assets/data/noise_questions.txt): nonsense that no
collection answers, made reproducibly (a fixed seed), for the term rule of
core/answering/known_terms.py to be tested on (tests/integration/test_noise_not_found.py).

Six kinds, in equal numbers: keyboard mashes (runs along a keyboard row), random letter strings,
shuffled syllables (pronounceable non-words), word salad of non-words with capitals and
punctuation, repeated letters, and non-words behind real question words ("what is asdf qwer").

    python -m benchmarks.noise_questions [--check]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "rag_assets" / "data" / "noise_questions.txt"
SEED = 58
PER_KIND = 34
ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "1234567890")
ONSETS = ("b", "bl", "br", "d", "dr", "f", "fl", "g", "gl", "gr", "k", "kr", "l", "m", "n", "p", "pl", "sn", "sk",
          "t", "tr", "v", "z", "zw", "qu", "j", "h", "w")  # fmt: skip
VOWELS = ("a", "e", "i", "o", "u", "oo", "ee", "ai", "ou", "y")
CODAS = ("", "", "", "b", "g", "k", "m", "n", "p", "rk", "rp", "sk", "x", "z", "nd", "mp")
ASKS = ("what is", "how do i", "why does the", "where is the", "who is", "what does", "when did the",
        "can you explain", "tell me about", "is there a")  # fmt: skip


def keyboard_mash(rng: random.Random) -> str:
    def run() -> str:
        row = rng.choice(ROWS[:3])
        start = rng.randrange(len(row) - 2)
        return row[start : start + rng.randint(3, min(6, len(row) - start))]

    return " ".join(run() for _ in range(rng.randint(2, 4)))


def letters(rng: random.Random) -> str:
    return " ".join(
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9))) for _ in range(rng.randint(2, 4))
    )


def non_word(rng: random.Random) -> str:
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(rng.randint(2, 3)))


def syllables(rng: random.Random) -> str:
    return " ".join(non_word(rng) for _ in range(rng.randint(2, 4)))


def word_salad(rng: random.Random) -> str:
    words = [non_word(rng) for _ in range(rng.randint(3, 6))]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice(("?", "!", ".", "??", "...", ""))


def repeated(rng: random.Random) -> str:
    return " ".join(rng.choice(string.ascii_lowercase) * rng.randint(4, 12) for _ in range(rng.randint(1, 3)))


def asked(rng: random.Random) -> str:
    made = rng.choice((keyboard_mash, letters, syllables))(rng).split()
    return f"{rng.choice(ASKS)} {' '.join(made[:2])}?"


KINDS = (keyboard_mash, letters, syllables, word_salad, repeated, asked)


def noise_questions(seed: int = SEED, per_kind: int = PER_KIND) -> list[str]:
    """`per_kind` questions of every kind, each once, made from `seed`."""
    rng = random.Random(seed)
    made: list[str] = []
    for kind in KINDS:
        kept = 0
        while kept < per_kind:
            question = kind(rng)
            if question not in made:
                made.append(question)
                kept += 1
    return made


def file_text(questions: list[str]) -> str:
    header = (
        "# Nonsense no collection answers (keyboard mashes, random letters, non-words, repeated letters),\n"
        f"# written by `python -m benchmarks.noise_questions` (seed {SEED}): do not edit by hand.\n"
    )
    return header + "\n".join(questions) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the packaged file differs")
    args = parser.parse_args()
    text = file_text(noise_questions())
    if args.check:
        same = OUT.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT} differs from what the generator writes")
        sys.exit(0 if same else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines()) - 2} questions to {OUT}")


if __name__ == "__main__":
    main()
