"""OCR engines read rendered born-digital pages, scored against the pages' own text layer.

Each page is rendered as `parsers.pdf_ocr` renders it (PDFium, grayscale, `--scale` pixels per
point: 3 = 216 dpi, table rules and underlines whitened: `--keep-rules` leaves them) and read
by Tesseract (`tesseract-ocr`, the engine `parsers.pdf_ocr` uses) and by RapidOCR (the PP-OCRv4
models in the `rapidocr-onnxruntime==1.4.4` wheel, on onnxruntime). The truth is the page's text
layer as `pdf_extract` reads it. Both texts are put in one reading order the same way (words in
lines by their vertical middles, lines top to bottom, words left to right) and their whitespace
collapsed, so a difference in the order of a table's cells or of two columns costs both engines
alike; words printed in figures, which the text layer lacks, cost both too.

- characters right: 1 - (Levenshtein edits between the truth and the OCR text) / (the truth's
  characters), summed over the pages (rapidfuzz); typographic quotes and dashes count: '' for “ is
  two errors;
- words right: the truth's words (with their punctuation) that the OCR text holds as many times,
  in any order, so a column read in another order costs nothing here;
- seconds per page: OCR alone (rendering aside), one thread per engine (Tesseract's
  OMP_THREAD_LIMIT=1, onnxruntime's intra/inter-op threads 1), as CPU seconds (this process's and
  its children's: Tesseract runs as a child), which other work on a shared machine does not
  inflate as it does the wall-clock seconds (also shown);
- garbage flagged: text layers of these born-digital pages that `pdf_text_quality` calls garbage
  (each would be read by OCR instead: it should be none).

The pages: two of each of five FinanceBench filings (a quarter and half way through: prose and
statements) and the first page of five public PDFs under tests/data/documents.

`--routes` instead counts, over every FinanceBench filing, the pages `sources.ocr: auto` would
send to OCR (no text layer, a garbage one, a few words stamped over a page-sized picture), the
blank ones it skips, and the pages it reads by their text layer; it names each page sent to OCR.

RapidOCR is not a dependency of the project (its wheel requires opencv-python, which clashes
with the opencv-python-headless already installed); install it for this benchmark with
`pip install --no-deps rapidocr-onnxruntime==1.4.4 pyclipper shapely six`.

    taskset -c 0 .venv/bin/python -m benchmarks.pdf_ocr --datasets ../shared/datasets
    .venv/bin/python -m benchmarks.pdf_ocr --datasets ../shared/datasets --routes
"""

from __future__ import annotations

import argparse
import io
import resource
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from rapidfuzz.distance import Levenshtein

from rag_assets.core.corpus.parsers.pdf_extract import STAMPED, layer_fault, text_layer, text_layer_runs
from rag_assets.core.corpus.parsers.pdf_ocr import OCR_SCALE, is_blank, tesseract_words, without_rules
from rag_assets.core.corpus.parsers.pdf_text_quality import text_is_garbage

FILINGS = ("3M_2018_10K", "ADOBE_2017_10K", "AMCOR_2023_10K", "BESTBUY_2019_10K", "PEPSICO_2022_10K")
REPO_PDFS = (
    "sample_pdf_1.pdf",
    "govuk_employment_contracts.pdf",
    "federal-register-2020-17221.pdf",
    "ca-warn-report.pdf",
    "N18-3011.pdf",
)
DOCUMENTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "documents"

Box = tuple[float, float, float, float, str]  # left, top, right, bottom (points), text


@dataclass
class Score:
    edits: int = 0
    chars: int = 0
    words: int = 0
    words_found: int = 0
    seconds: list[float] = field(default_factory=list)  # CPU
    wall: list[float] = field(default_factory=list)

    def add(self, truth: str, read: str, seconds: float, wall: float) -> float:
        edits = Levenshtein.distance(truth, read)
        self.edits, self.chars = self.edits + edits, self.chars + len(truth)
        truth_words, read_words = Counter(truth.split()), Counter(read.split())
        self.words += sum(truth_words.values())
        self.words_found += sum((truth_words & read_words).values())
        self.seconds.append(seconds)
        self.wall.append(wall)
        return max(0.0, 1 - edits / max(len(truth), 1))

    @property
    def accuracy(self) -> float:
        return max(0.0, 1 - self.edits / max(self.chars, 1))

    @property
    def words_right(self) -> float:
        return self.words_found / max(self.words, 1)

    @property
    def per_page(self) -> float:
        return sum(self.seconds) / max(len(self.seconds), 1)

    @property
    def wall_per_page(self) -> float:
        return sum(self.wall) / max(len(self.wall), 1)


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (Tesseract)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def reading_text(boxes: Sequence[Box]) -> str:
    """Words in lines (a word joins the line whose vertical middle is within half its height),
    lines top to bottom, words left to right; whitespace collapsed."""
    lines: list[tuple[float, list[Box]]] = []
    for box in sorted(boxes, key=lambda b: (b[1] + b[3]) / 2):
        middle = (box[1] + box[3]) / 2
        if lines and abs(lines[-1][0] - middle) <= max(2.0, (box[3] - box[1]) / 2):
            lines[-1][1].append(box)
        else:
            lines.append((middle, [box]))
    text = " ".join(" ".join(b[4] for b in sorted(words, key=lambda b: b[0])) for _, words in lines)
    return " ".join(text.split())


def tesseract_engine(image: object, scale: float) -> list[Box]:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")  # type: ignore[attr-defined]
    return [(w.left, w.top, w.right, w.bottom, w.text) for w in tesseract_words(buffer.getvalue(), scale)]


def rapidocr_engine() -> Callable[[object, float], list[Box]]:
    from rapidocr_onnxruntime import RapidOCR  # not a project dependency: see the module's docstring

    engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(image: object, scale: float) -> list[Box]:
        found, _ = engine(np.array(image.convert("RGB")))  # type: ignore[attr-defined]
        boxes = []
        for corners, text, _score in found or []:
            xs, ys = [p[0] / scale for p in corners], [p[1] / scale for p in corners]
            boxes.append((min(xs), min(ys), max(xs), max(ys), text))
        return boxes

    return read


def pages(datasets: Path) -> list[tuple[str, Path, int]]:
    """(label, file, 0-based page) of the measured pages."""
    chosen = []
    for filing in FILINGS:
        path = datasets / "financebench" / "pdfs" / f"{filing}.pdf"
        count = len(pdfium.PdfDocument(path))
        chosen += [(f"{filing} p. {i + 1}", path, i) for i in (count // 4, count // 2)]
    return chosen + [(f"{name} p. 1", DOCUMENTS / name, 0) for name in REPO_PDFS]


_ROUTES = {
    "no text layer": "no text layer: OCR",
    "its text layer is garbage": "garbage text layer: OCR",
    STAMPED: "stamped words over a picture: OCR",
}


def page_route(page: pdfium.PdfPage) -> str:
    """How `pdf_extract` reads the page with OCR on auto (its rules, without running OCR)."""
    layer = text_layer(page)
    runs = layer.runs
    fault = layer_fault(page, runs, layer.unmapped)
    if fault is None:
        return "text layer"
    if not runs and is_blank(page):
        return "blank"
    return _ROUTES[fault]


def routes(datasets: Path) -> None:
    counts: Counter[str] = Counter()
    for path in sorted((datasets / "financebench" / "pdfs").glob("*.pdf")):
        document = pdfium.PdfDocument(path)
        for index in range(len(document)):
            route = page_route(document[index])
            counts[route] += 1
            if route.endswith("OCR"):
                print(f"{path.stem} p. {index + 1}: {route}", flush=True)
        document.close()
    print("\n| pages | count |\n|---|---:|")
    for route, count in counts.most_common():
        print(f"| {route} | {count:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--scale", type=float, default=OCR_SCALE, help="pixels per point (3 = 216 dpi)")
    parser.add_argument("--engines", default="tesseract,rapidocr")
    parser.add_argument("--keep-rules", action="store_true", help="OCR the page as rendered, rules kept")
    parser.add_argument("--routes", action="store_true", help="count FinanceBench's pages by how auto reads them")
    args = parser.parse_args()
    if args.routes:
        routes(args.datasets)
        return
    engines: dict[str, Callable[[object, float], list[Box]]] = {}
    for name in args.engines.split(","):
        engines[name] = tesseract_engine if name == "tesseract" else rapidocr_engine()
    scores = {name: Score() for name in engines}
    garbage = 0
    print(f"| page | characters | {' | '.join(f'{n} right | {n} CPU s' for n in engines)} |")
    print("|---|---:|" + "---:|---:|" * len(engines))
    for label, path, index in pages(args.datasets):
        document = pdfium.PdfDocument(path)
        page = document[index]
        runs = text_layer_runs(page)
        garbage += text_is_garbage("\n".join(str(r[6]) for r in runs))
        truth = reading_text([(r[0], r[1], r[2], r[3], str(r[6])) for r in runs])  # type: ignore[misc]
        rendered = page.render(scale=args.scale, grayscale=True).to_pil()
        image = rendered if args.keep_rules else without_rules(rendered, args.scale)
        cells = []
        for name, engine in engines.items():
            start, cpu = time.perf_counter(), cpu_seconds()
            read = reading_text(engine(image, args.scale))
            seconds, wall = cpu_seconds() - cpu, time.perf_counter() - start
            cells.append(f"{scores[name].add(truth, read, seconds, wall):.3f} | {seconds:.2f}")
        print(f"| {label} | {len(truth):,} | {' | '.join(cells)} |", flush=True)
        document.close()
    print()
    print("| engine | characters right | words right | CPU seconds per page | wall seconds per page |")
    print("|---|---:|---:|---:|---:|")
    for name, score in scores.items():
        cells = f"{score.accuracy:.3f} | {score.words_right:.3f} | {score.per_page:.2f} | {score.wall_per_page:.2f}"
        print(f"| {name} | {cells} |")
    if len(scores) == 2:
        (first, a), (second, b) = scores.items()
        print(
            f"\n{first} / {second}: errors {(1 - a.accuracy) / max(1 - b.accuracy, 1e-9):.2f}x, "
            f"CPU time {a.per_page / max(b.per_page, 1e-9):.2f}x"
        )
    print(
        f"\ngarbage flagged among the {sum(len(s.seconds) for s in scores.values()) // len(scores)} text layers: {garbage}"
    )


if __name__ == "__main__":
    main()
