"""PDF engines compared on the same files: headings, reading order, paragraphs, speed, memory.

Engines:
- `reader`: this project's reader (extract_pdf, parse_pdf, build_tree, as ingestion runs it);
- `opendataloader`: opendataloader-pdf's Java CLI from its wheel (`-f json --image-output off`,
  its defaults otherwise: xycut reading order, headers and footers left out);
- `pymupdf4llm`: pymupdf4llm's markdown per page (`page_chunks=True`; `use_ocr=False`: the text
  layer, as the others read it), a reference only (AGPL: the `bench` extra installs it; rag_assets
  never imports it).

Each engine reads each file in a process of its own, so its peak memory (the child's maximum
resident set, `os.wait4`) and seconds are its own: wall seconds, for the Python engines of the
read alone (the child's interpreter start and imports aside, its memory included), for the Java CLI
of the whole process (the JVM's start included); CPU seconds (user + system) of the whole child. Output is converted to (page, level,
heading) and (page, text block) lists (benchmarks/pdf_engine_outputs.py) and scored:

- headings: FinanceBench's filings with a real outline, read without it, against the bookmarks
  (benchmarks/heading_truth.py: precision, recall, parent accuracy);
- reading order and paragraph integrity: the hand-labelled paragraphs of
  benchmarks/data/reading_order/ (benchmarks/reading_order.py).

Needs `qpdf` and `java` (Debian: qpdf, openjdk-17-jre-headless) and the `bench` extra, which
`make install-bench` brings, and ../shared/datasets/financebench.

    .venv/bin/python -m benchmarks.pdf_engines --datasets ../shared/datasets [--engines reader,opendataloader]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pypdfium2 as pdfium

from benchmarks.heading_truth import Heading, HeadingTotals, outlined_filings, score_headings, without_outline
from benchmarks.pdf_engine_outputs import (
    TextBlock,
    markdown_blocks,
    markdown_headings,
    opendataloader_blocks,
    opendataloader_headings,
    read_tree,
    tree_blocks,
    tree_headings,
)
from benchmarks.reading_order import load_truth, score_reading

ENGINES = ("reader", "opendataloader", "pymupdf4llm")
TRUTH_FOLDER = Path(__file__).parent / "data" / "reading_order"


class EngineFailed(RuntimeError):
    """An engine's process ended with an error on a file."""


@dataclass(frozen=True)
class EngineRun:
    headings: list[Heading]
    blocks: list[TextBlock]
    seconds: float  # the read's wall seconds
    cpu_seconds: float  # the child process's user + system seconds
    peak_mb: float  # the child process's maximum resident set


def _read_in_process(engine: str, path: Path) -> tuple[list[Heading], list[TextBlock]]:
    """A Python engine's headings and blocks of `path` (run in the child process)."""
    if engine == "reader":
        tree = read_tree(path)
        return tree_headings(tree), tree_blocks(tree)
    import pymupdf4llm  # the bench extra; AGPL, never imported by rag_assets

    pages = [chunk["text"] for chunk in pymupdf4llm.to_markdown(str(path), page_chunks=True, use_ocr=False)]
    return markdown_headings(pages), markdown_blocks(pages)


def measured_child(command: list[str], log: Path) -> tuple[float, float, float]:
    """Run `command`; its (wall seconds, CPU seconds, peak MB). A failure names the command."""
    started = time.perf_counter()
    with log.open("wb") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        tail = log.read_text(errors="replace")[-800:]
        raise EngineFailed(f"{' '.join(command[:4])} ... failed ({process.returncode}): {tail}")
    # ru_maxrss is in kilobytes on Linux
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _opendataloader_jar() -> Path:
    try:
        from importlib.resources import files

        jar = Path(str(files("opendataloader_pdf").joinpath("jar", "opendataloader-pdf-cli.jar")))
    except ModuleNotFoundError:
        sys.exit("opendataloader-pdf is not installed: make install-bench")
    if shutil.which("java") is None:
        sys.exit("java is not installed: make install-bench (apt-get install openjdk-17-jre-headless)")
    return jar


def run_engine(engine: str, path: Path, work: Path) -> EngineRun:
    """`engine` on `path`, in a process of its own (files under `work`)."""
    out = work / f"{engine}-{path.stem}"
    out.mkdir(parents=True, exist_ok=True)
    if engine == "opendataloader":
        command = ["java", "-Djava.awt.headless=true", f"-Djava.io.tmpdir={work}", "-jar", str(_opendataloader_jar())]
        command += ["-f", "json", "--image-output", "off", "--quiet", "-o", str(out), str(path)]
        seconds, cpu, peak = measured_child(command, out / "stderr.txt")
        document = json.loads((out / f"{path.stem}.json").read_text())
        return EngineRun(opendataloader_headings(document), opendataloader_blocks(document), seconds, cpu, peak)
    result = out / "read.json"
    command = [sys.executable, "-m", "benchmarks.pdf_engines", "--read", engine, str(path), str(result)]
    _, cpu, peak = measured_child(command, out / "stderr.txt")
    read = json.loads(result.read_text())
    headings = [Heading(**h) for h in read["headings"]]
    blocks = [TextBlock(**b) for b in read["blocks"]]
    return EngineRun(headings, blocks, read["seconds"], cpu, peak)


def _write_read(engine: str, path: Path, result: Path) -> None:
    """The child's side: read `path` with `engine`, write headings, blocks and seconds to `result`."""
    started = time.perf_counter()
    headings, blocks = _read_in_process(engine, path)
    seconds = time.perf_counter() - started
    data = {"seconds": seconds, "headings": [asdict(h) for h in headings], "blocks": [asdict(b) for b in blocks]}
    result.write_text(json.dumps(data))


@dataclass
class SpeedTotals:
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    peak_mb: float = 0.0

    def add(self, pages: int, run: EngineRun) -> None:
        self.pages += pages
        self.seconds += run.seconds
        self.cpu_seconds += run.cpu_seconds
        self.peak_mb = max(self.peak_mb, run.peak_mb)


def _page_count(path: Path) -> int:
    document = pdfium.PdfDocument(path)
    try:
        return len(document)
    finally:
        document.close()


def compare_headings(files: list[Path], engines: list[str], work: Path) -> None:
    """Per filing and in all, each engine's heading scores, seconds per page and peak memory."""
    totals = {engine: HeadingTotals() for engine in engines}
    speeds = {engine: SpeedTotals() for engine in engines}
    print("| filing | pages | " + " | ".join(f"{e} P / R / parent" for e in engines) + " |")
    print("|---|---:|" + "---|" * len(engines))
    for path in files:
        copy = without_outline(path, work)
        pages = _page_count(copy)
        cells = []
        for engine in engines:
            try:
                run = run_engine(engine, copy, work)
            except EngineFailed as failure:  # reported in its cell; the other files still count
                print(f"{path.name}: {failure}", file=sys.stderr)
                cells.append("failed")
                continue
            score = score_headings(run.headings, path)
            totals[engine].add(score)
            speeds[engine].add(pages, run)
            parents = "flat" if score.flat else f"{score.parents / max(score.matched, 1):.3f}"
            cells.append(
                f"{score.matched / max(score.headings, 1):.3f} / {score.matched / max(score.counted, 1):.3f} / {parents}"
            )
        print(f"| {path.stem} | {pages} | " + " | ".join(cells) + " |", flush=True)
    print()
    print(
        "| engine | filings | pages | headings | matched | precision | recall | parent accuracy | s / page | CPU s / page | peak RSS MB |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for engine in engines:
        t, s = totals[engine], speeds[engine]
        print(
            f"| {engine} | {t.filings} | {s.pages} | {t.headings} | {t.matched} | {t.precision:.3f} | {t.recall:.3f} | "
            f"{f'{t.parent_accuracy:.3f}' if t.parented else 'flat'} | {s.seconds / max(s.pages, 1):.3f} | {s.cpu_seconds / max(s.pages, 1):.3f} | "
            f"{s.peak_mb:.0f} |"
        )


def compare_reading(truths: list[Path], engines: list[str], work: Path) -> None:
    """Each engine's reading order and paragraph integrity on the hand-labelled files."""
    print("| engine | file | paragraphs | found | whole | merged | in order | order faults |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for truth_path in truths:
        truth = load_truth(truth_path)
        for engine in engines:
            try:
                score = score_reading(run_engine(engine, truth.pdf, work).blocks, truth.paragraphs)
            except EngineFailed as failure:
                print(f"{truth.pdf.name}: {failure}", file=sys.stderr)
                print(f"| {engine} | {truth.pdf.name} | failed | | | | | |", flush=True)
                continue
            print(
                f"| {engine} | {truth.pdf.name} | {score.paragraphs} | {score.found} | {score.whole} | "
                f"{score.merged} | {score.in_order} of {score.ordered} | {score.order_faults} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--engines", default=",".join(ENGINES), help=f"comma-separated, of {', '.join(ENGINES)}")
    parser.add_argument("--only", help="score only the filings whose file name contains this")
    parser.add_argument("--no-headings", action="store_true", help="reading order only (no FinanceBench)")
    parser.add_argument("--read", nargs=3, metavar=("ENGINE", "PDF", "RESULT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read:
        _write_read(args.read[0], Path(args.read[1]), Path(args.read[2]))
        return
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        sys.exit(f"unknown engine(s) {unknown}: choose from {', '.join(ENGINES)}")
    with tempfile.TemporaryDirectory() as temp:
        print("## Reading order and paragraph integrity\n")
        compare_reading(sorted(TRUTH_FOLDER.glob("*.json")), engines, Path(temp))
        if args.no_headings:
            return
        folder = args.datasets / "financebench" / "pdfs"
        if not folder.is_dir():
            sys.exit(f"no FinanceBench filings at {folder}")
        files = [p for p in outlined_filings(folder) if args.only is None or args.only in p.name]
        print("\n## Headings against the filings' bookmarks (outline removed)\n")
        compare_headings(files, engines, Path(temp))


if __name__ == "__main__":
    main()
