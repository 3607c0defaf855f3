"""How much of a document's heading tree survives the trip to PDF or Word and back.

Pages whose headings are known are rendered to PDF with headless Chromium (once with the
document outline Chromium can write from the headings, once without, so the layout inference
is measured alone, and once set in two columns without outline, so reading order is measured
too) and written as .docx with python-docx; each file is then read by this
project's parsers and its heading tree compared with the source's (the HTML parser's tree of
the same page):

- heading precision / recall: recovered headings that are source headings (text matched in
  order), and source headings recovered;
- parent accuracy: matched headings whose parent heading is the matched source heading's parent;
- content recall: source content nodes whose text appears in the recovered document's text
  (what reading order, running headers and page breaks did to the body);
- content nodes: source content nodes recovered as one node of the same text (what the
  segmentation into paragraphs, list items and rows kept: retrieval cites nodes).

Sources: (a) the conditionalqa gov.uk pages of ../shared/datasets (real HTML, h1-h3), when
present; (b) topics of the built-in Python reference (text with underlined headings), written
as HTML. Needs `chromium` on PATH.

    .venv/bin/python -m benchmarks.document_structure [--datasets ../shared/datasets] [--topics 30]

`--write-pdfs DIR` only prints the conditionalqa pages to DIR/<doc_id>.pdf (with outline).

`--end-to-end DIR` is the end-to-end comparison: the conditionalqa collection built from its HTML
pages and from those pages printed to PDF (into DIR/pdfs), with the same questions, each run by
`evidence_evaluation.py` in its own DAGSTER_HOME under DIR (both at once), with the run config's
settings (`--config`, default run.datasets.yaml), a small encoder router (12 steps, 60 synthetic
questions) and the encoder router kind only; then one table: rag-hybrid's and rdr2's evidence
recall and passage hit from HTML and from PDF, their paired difference and whether it lies within
0.03. Most of an hour on two CPU cores; `--no-run` prints the table from DIR's catalogues.

    .venv/bin/python -m benchmarks.document_structure --end-to-end /tmp/e2e2
"""

from __future__ import annotations

import argparse
import difflib
import html
import io
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import docx

from benchmarks.common import catalogue_in
from rag_assets.core.corpus.blocks import Block, BlockKind
from rag_assets.core.corpus.parsers import extract_binary, parse_blocks
from rag_assets.core.corpus.tree import STRUCTURE, DocumentTree, build_tree
from rag_assets.core.settings import PROJECT_ROOT

TWO_COLUMNS = "column-count: 2; column-gap: 2em"  # the same page set in two columns: reading order
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@dataclass(slots=True)
class Scores:
    documents: int = 0
    source_headings: int = 0
    recovered_headings: int = 0
    matched: int = 0
    parents_right: int = 0
    source_contents: int = 0
    contents_found: int = 0
    contents_whole: int = 0
    pages: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def add(self, truth: DocumentTree, got: DocumentTree) -> None:
        truth_heads, got_heads = _headings(truth), _headings(got)
        matcher = difflib.SequenceMatcher(None, [h[0] for h in truth_heads], [h[0] for h in got_heads], autojunk=False)
        pairs = [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]
        self.documents += 1
        self.source_headings += len(truth_heads)
        self.recovered_headings += len(got_heads)
        self.matched += len(pairs)
        self.parents_right += sum(truth_heads[a][1] == got_heads[b][1] for a, b in pairs)
        text = _key(got.text)
        contents = [_key(n.text) for n in truth.nodes if n.kind != STRUCTURE]
        self.source_contents += len(contents)
        self.contents_found += sum(c in text for c in contents)
        nodes = {_key(n.text) for n in got.nodes if n.kind != STRUCTURE}
        self.contents_whole += sum(c in nodes for c in contents)

    def row(self, name: str) -> str:
        precision = self.matched / max(self.recovered_headings, 1)
        recall = self.matched / max(self.source_headings, 1)
        parents = self.parents_right / max(self.matched, 1)
        content = self.contents_found / max(self.source_contents, 1)
        whole = self.contents_whole / max(self.source_contents, 1)
        speed = f"{self.pages / self.seconds:.0f}" if self.pages and self.seconds else "-"
        return (
            f"| {name} | {self.documents} | {self.source_headings} | {precision:.3f} | {recall:.3f} | "
            f"{parents:.3f} | {content:.3f} | {whole:.3f} | {speed} | {len(self.failures)} |"
        )


def _key(text: str) -> str:
    return " ".join(text.casefold().replace("’", "'").split()).rstrip(".:")


def _headings(tree: DocumentTree) -> list[tuple[str, str]]:
    """(heading, its parent heading or '' under the root) for every heading below the root."""
    by_id = {n.node_id: n for n in tree.nodes}
    out = []
    for node in tree.nodes[1:]:
        if node.kind == STRUCTURE:
            parent = by_id[node.parent_id] if node.parent_id is not None else None
            out.append((_key(node.text), _key(parent.text) if parent is not None and parent.node_id else ""))
    return out


def blocks_html(title: str, blocks: Iterable[Block]) -> str:
    """A page of these blocks: headings as h1-h6, items as nested lists, rows as one table."""
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head><body>"]
    depth = 0
    in_table = False
    for block in blocks:
        text = html.escape(block.text)
        if block.kind is not BlockKind.LIST_ITEM:
            out.append("</ul>" * depth)
            depth = 0
        if block.kind is not BlockKind.TABLE_ROW and in_table:
            out.append("</table>")
            in_table = False
        if block.kind is BlockKind.HEADING:
            out.append(f"<h{min(block.level, 6)}>{text}</h{min(block.level, 6)}>")
        elif block.kind is BlockKind.LIST_ITEM:
            out.append("<ul>" * max(block.level - depth, 0) + "</ul>" * max(depth - block.level, 0))
            depth = block.level
            out.append(f"<li>{text}</li>")
        elif block.kind is BlockKind.TABLE_ROW:
            out.append("" if in_table else "<table>")
            in_table = True
            out.append("<tr>" + "".join(f"<td>{c}</td>" for c in text.split(" | ")) + "</tr>")
        elif block.kind is BlockKind.CODE:
            out.append(f"<pre>{text}</pre>")
        else:
            out.append(f"<p>{text}</p>")
    out.append("</ul>" * depth + ("</table>" if in_table else "") + "</body></html>")
    return "\n".join(out)


def blocks_docx(blocks: Iterable[Block]) -> bytes:
    """A .docx of these blocks with Word's own styles (Heading n, List Bullet n, a table per run)."""
    document = docx.Document()
    table = None
    for block in blocks:
        if block.kind is not BlockKind.TABLE_ROW:
            table = None
        if block.kind is BlockKind.HEADING:
            document.add_heading(block.text, level=min(block.level, 9))
        elif block.kind is BlockKind.LIST_ITEM:
            level = min(block.level, 3)
            document.add_paragraph(block.text, style="List Bullet" if level == 1 else f"List Bullet {level}")
        elif block.kind is BlockKind.TABLE_ROW:
            cells = block.text.split(" | ")
            if table is None or len(table.columns) != len(cells):
                table = document.add_table(rows=0, cols=len(cells))
            row = table.add_row()
            for cell, value in zip(row.cells, cells, strict=True):
                cell.text = value
        else:
            document.add_paragraph(block.text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def render_pdf(chromium: str, page: Path, out: Path, *, outline: bool) -> None:
    flags = [*CHROMIUM_FLAGS, *(["--generate-pdf-document-outline"] if outline else [])]
    subprocess.run(
        [chromium, *flags, f"--print-to-pdf={out}", page.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )


def _page_html(record: dict) -> str:
    """A conditionalqa page record as an HTML page titled with its title."""
    title = html.escape(record["title"])
    body = "\n".join(record["html_lines"])
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>{body}</body></html>"


def write_pdfs(chromium: str, pages: Path, folder: Path) -> None:
    """Every page of a pages.jsonl (doc_id, title, html_lines) printed to folder/<doc_id>.pdf."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for line in pages.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            page = Path(tmp) / f"{record['doc_id']}.html"
            page.write_text(_page_html(record), encoding="utf-8")
            render_pdf(chromium, page, folder / f"{record['doc_id']}.pdf", outline=True)
    print(f"{len(list(folder.glob('*.pdf')))} PDFs in {folder}")


def _sources(datasets: Path, topics: int, max_pages: int | None = None) -> list[tuple[str, str, str]]:
    """(set name, title, page HTML) of every source page."""
    pages: list[tuple[str, str, str]] = []
    conditionalqa = datasets / "conditionalqa" / "pages.jsonl"
    if conditionalqa.is_file():
        for line in conditionalqa.read_text(encoding="utf-8").splitlines()[:max_pages]:
            record = json.loads(line)
            pages.append(("conditionalqa", record["title"], _page_html(record)))
    else:
        print(f"skipping conditionalqa: {conditionalqa} not found")
    from pydoc_data.topics import topics as reference

    chosen = 0
    for key in sorted(reference):
        blocks = parse_blocks("text", reference[key])
        if sum(b.kind is BlockKind.HEADING for b in blocks) >= 3 and chosen < topics:
            pages.append(("python-reference", key, blocks_html(key, blocks)))
            chosen += 1
    return pages


# The end-to-end comparison's collections, same questions: (name, source, format in the
# collections file): the page records (one HTML document per line), and their printed PDFs.
E2E_COLLECTIONS = (("conditionalqa", "html", "jsonl"), ("conditionalqa_pdf", "pdf", "pdf"))
E2E_STRATEGIES = ("rag-hybrid", "rdr2-encoder")
E2E_METRICS = (("evidence_recall", "evidence recall"), ("passage_hit", "passage hit"))
E2E_TOLERANCE = 0.03
# A small encoder router: what the comparison needs is the same training on both collections.
E2E_OPS = {
    "router_adapter": {"config": {"kinds": ["encoder"], "encoder_max_steps": 12}},
    "synthetic_questions": {"config": {"count": 60}},
    "evidence_evaluation": {"config": {"kinds": ["encoder"]}},
}


def _e2e_home(folder: Path, collection: str) -> Path:
    return folder / f"home-{collection}"


def run_end_to_end(chromium: str, conditionalqa: Path, folder: Path, config: Path) -> None:
    """Print the pages to PDF, write the two collections and the run config into `folder`, and run
    `evidence_evaluation.py` for each collection in its own DAGSTER_HOME (both at once)."""
    import os
    import sys

    import yaml

    folder = folder.resolve()
    write_pdfs(chromium, conditionalqa / "pages.jsonl", folder / "pdfs")
    questions = str((conditionalqa / "questions_dev.jsonl").resolve())
    paths = {"html": str((conditionalqa / "pages.jsonl").resolve()), "pdf": str(folder / "pdfs")}
    entries = [
        {"name": name, "path": paths[source], "format": fmt, "questions": questions}
        for name, source, fmt in E2E_COLLECTIONS
    ]
    (folder / "collections.yaml").write_text(yaml.safe_dump({"collections": entries}, sort_keys=False))
    ops = (yaml.safe_load(config.read_text()) or {}).get("ops", {})
    for name, settings in E2E_OPS.items():
        ops.setdefault(name, {}).setdefault("config", {}).update(settings["config"])
    (folder / "run.yaml").write_text(yaml.safe_dump({"ops": ops}, sort_keys=False))
    repo = Path(__file__).resolve().parents[1]
    running: list[tuple[str, subprocess.Popen, Path]] = []
    for name, _, _ in E2E_COLLECTIONS:
        home = _e2e_home(folder, name)
        (home / "data").mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home),
            "RAG_DATA_DIR": str(home / "data"),
            "RAG_COLLECTIONS": str(folder / "collections.yaml"),
        }
        command = [
            sys.executable,
            "-m",
            "benchmarks.evidence_evaluation",
            "-c",
            name,
            "--config",
            str(folder / "run.yaml"),
        ]
        log = folder / f"{name}.log"
        with log.open("w") as out:
            running.append(
                (name, subprocess.Popen(command, env=env, cwd=repo, stdout=out, stderr=subprocess.STDOUT), log)
            )
        print(f"{name}: evidence evaluation running, log {log}", flush=True)
    started = time.perf_counter()
    for name, process, log in running:
        if process.wait() != 0:
            raise SystemExit(f"{name}: evidence_evaluation.py failed (exit {process.returncode}); see {log}")
        print(f"{name}: done after {time.perf_counter() - started:.0f} s", flush=True)


def print_end_to_end(folder: Path) -> None:
    """The comparison table from the two collections' stored evidence rows."""
    from rag_assets.core.evaluation.evidence import estimate
    from rag_assets.core.store.collections import count_rows
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.evidence import load_evidence

    rows = {}
    documents = {}
    for name, source, _ in E2E_COLLECTIONS:
        catalogue = catalogue_in(_e2e_home(folder, name) / "data")
        if not catalogue.is_file():
            raise SystemExit(f"{catalogue} not found: run --end-to-end {folder} without --no-run first")
        with catalogue_connection(catalogue, read_only=True) as con:
            rows[source] = {(r.strategy, r.qid): r.metrics for r in load_evidence(con, name)}
            documents[source] = count_rows(con, "source_documents", name)
    questions = {qid for _, qid in rows["html"]} & {qid for _, qid in rows["pdf"]}
    print(
        f"\nEnd to end: conditionalqa built from its HTML pages and from the same pages printed to PDF, "
        f"the same {len(questions)} evaluation questions ({documents['html']} HTML and {documents['pdf']} PDF documents), "
        "evidence without the reader; Δ: PDF − HTML, paired over questions (95% bootstrap interval)\n"
    )
    print(f"| strategy | metric | questions | HTML | PDF | Δ (95% CI) | within {E2E_TOLERANCE} |")
    print("|---|---|---:|---:|---:|---:|---|")
    for strategy in E2E_STRATEGIES:
        for metric, label in E2E_METRICS:
            pairs = [
                (html_m[metric], pdf_m[metric])
                for qid in sorted(questions)
                if (html_m := rows["html"].get((strategy, qid))) is not None
                and (pdf_m := rows["pdf"].get((strategy, qid))) is not None
                and metric in html_m
                and metric in pdf_m
            ]
            if not pairs:
                continue
            html_mean = sum(h for h, _ in pairs) / len(pairs)
            pdf_mean = sum(p for _, p in pairs) / len(pairs)
            delta = estimate([p - h for h, p in pairs])
            within = "yes" if abs(delta.mean) <= E2E_TOLERANCE else "no"
            print(
                f"| {strategy} | {label} | {len(pairs)} | {html_mean:.3f} | {pdf_mean:.3f} | "
                f"{delta.text(signed=True)} | {within} |"
            )


def measure_structure(chromium: str, datasets: Path, topics: int, pages: int | None) -> None:
    """Print every source page in each variant, read it back and print the table of scores."""
    results: dict[tuple[str, str], Scores] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for number, (source, title, page) in enumerate(_sources(datasets, topics, pages)):
            truth = build_tree(title, parse_blocks("html", page))
            html_file = folder / f"{number}.html"
            html_file.write_text(page, encoding="utf-8")
            columns_file = folder / f"{number}-columns.html"
            columns_file.write_text(page.replace("<body>", f"<body style='{TWO_COLUMNS}'>", 1), encoding="utf-8")
            files: dict[str, bytes] = {}
            variants = (
                ("pdf (outline)", html_file, True),
                ("pdf (layout only)", html_file, False),
                ("pdf (two columns, layout only)", columns_file, False),
            )
            for fmt, source_file, outline in variants:
                pdf = folder / f"{number}.pdf"
                render_pdf(chromium, source_file, pdf, outline=outline)
                files[fmt] = pdf.read_bytes()
            files["docx"] = blocks_docx(parse_blocks("html", page))
            for fmt, data in files.items():
                scores = results.setdefault((source, fmt), Scores())
                started = time.perf_counter()
                try:
                    kind = "docx" if fmt == "docx" else "pdf"
                    layout, _ = extract_binary(kind, data)
                    got = build_tree(title, parse_blocks(kind, layout))
                except ValueError as err:
                    scores.failures.append(f"{title}: {err}")
                    continue
                scores.seconds += time.perf_counter() - started
                if kind == "pdf":
                    scores.pages += len(json.loads(layout)["pages"])
                scores.add(truth, got)
    print(
        "| source | format | documents | source headings | heading precision | heading recall | parent accuracy "
        "| content recall | content nodes | pages/s | failures |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (source, fmt), scores in results.items():
        print(scores.row(f"{source} | {fmt}"))
        for failure in scores.failures[:3]:
            print(f"  failed: {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    parser.add_argument("--topics", type=int, default=30, help="Python reference topics to include")
    parser.add_argument("--pages", type=int, help="only the first N conditionalqa pages")
    parser.add_argument("--write-pdfs", type=Path, help="only print the conditionalqa pages to this folder")
    parser.add_argument("--end-to-end", type=Path, help="work folder of the HTML vs PDF evidence comparison")
    parser.add_argument("--config", type=Path, default=PROJECT_ROOT / "run.datasets.yaml", help="its run config")
    parser.add_argument("--no-run", action="store_true", help="print the comparison from the folder's catalogues")
    args = parser.parse_args()
    if args.end_to_end and args.no_run:
        print_end_to_end(args.end_to_end)
        return
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SystemExit("chromium not found on PATH (apt-get install -y chromium)")
    if args.write_pdfs:
        write_pdfs(chromium, args.datasets / "conditionalqa" / "pages.jsonl", args.write_pdfs)
        return
    if args.end_to_end:
        run_end_to_end(chromium, args.datasets / "conditionalqa", args.end_to_end, args.config)
        print_end_to_end(args.end_to_end)
        return
    measure_structure(chromium, args.datasets, args.topics, args.pages)


if __name__ == "__main__":
    main()
