"""The Word reader on a long document: the .docx reader of rag_assets (extract_docx) against the
previous one (python-docx proxies per paragraph, read from git at BASELINE_COMMIT), on the same
100,000-paragraph file in the same run; both must give the same blocks.

    PYTHONPATH=. python -m benchmarks.docx_reader [--paragraphs 100000]
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import time
import types
import zipfile
from pathlib import Path

import docx

BASELINE_COMMIT = "ec1ab43"  # the reader before it walked the XML itself
READER = "rag_assets/core/corpus/parsers/docx.py"

UNIT = 10  # paragraphs per repeated unit (headings, list items, plain paragraphs, a table row)


def long_docx(paragraphs: int) -> bytes:
    """A .docx of `paragraphs` paragraphs: a unit of headings, list items, paragraphs and a small
    table written with python-docx, its body repeated."""
    document = docx.Document()
    document.add_paragraph("Chapter", style="Heading 1")
    document.add_paragraph("Section", style="Heading 2")
    for i in range(3):
        document.add_paragraph(f"Step {i} of the procedure, with a few more words in it.", style="List Number")
    for i in range(4):
        document.add_paragraph(f"Paragraph {i}: the kettle boils water for tea; green tea wants 80 C.")
    table = document.add_table(rows=1, cols=3)
    for cell, text in zip(table.rows[0].cells, ("a", "b", "c")):
        cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    xml = parts["word/document.xml"].decode()
    body = re.search(r"<w:body>(.*)(<w:sectPr.*</w:sectPr>)</w:body>", xml, re.S)
    assert body is not None
    repeated = body.group(1) * (paragraphs // UNIT)
    parts["word/document.xml"] = (xml[: body.start(1)] + repeated + xml[body.start(2) :]).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in parts.items():
            target.writestr(name, data)
    return out.getvalue()


def baseline_reader() -> types.ModuleType:
    """The previous reader's module, from git."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(
        ["git", "show", f"{BASELINE_COMMIT}:{READER}"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("docx_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up there
    exec(compile(source, f"{BASELINE_COMMIT}:{READER}", "exec"), module.__dict__)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--paragraphs", type=int, default=100_000)
    args = parser.parse_args()
    from rag_assets.core.corpus.parsers.docx import extract_docx

    extract_docx_baseline = baseline_reader().extract_docx

    data = long_docx(args.paragraphs)
    print(f"{args.paragraphs} paragraphs, {len(data) / 1e6:.1f} MB zipped")
    timings = {}
    results = {}
    for name, read in (("reader", extract_docx), ("baseline", extract_docx_baseline)):
        started = time.perf_counter()
        results[name] = read(data)
        timings[name] = time.perf_counter() - started
        print(f"{name}: {timings[name]:.2f} s ({timings[name] / args.paragraphs * 1e6:.1f} us per paragraph)")
    assert results["reader"].layout == results["baseline"].layout, "the two readers disagree"
    print(f"speed-up: {timings['baseline'] / timings['reader']:.1f}x (same blocks)")


if __name__ == "__main__":
    main()
