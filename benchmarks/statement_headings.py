"""Would the router expand a statement if its heading were scored by the statement's row labels?

For each dev + test question with gold pages (FinanceBench), in its gold filing: the heading whose
section holds most of the gold page's nodes (for a metric question: the statement), and where the
published encoder router ranks it among the filing's headings, scored as a collapsed heading is
now (`heading_context`: its path and the first words of its own content, which for a statement
are its first rows with every figure) against a statement view (its path, then the table's row
labels without figures or dot leaders: what a person scans a statement by). Counts of questions
whose gold heading ranks in the top 5, and scores at least the router's expand threshold.

    RAG_DATA=$PWD/../shared/datasets RAG_COLLECTIONS=collections.datasets.yaml \\
    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.statement_headings -c financebench
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

import numpy as np

from benchmarks.common import open_collection
from rag_assets.core.corpus.tree import STRUCTURE
from rag_assets.core.evaluation.scoring import same_document
from rag_assets.core.routing.scoring_router import CONTEXT_WORDS, PATH_SEPARATOR, heading_context
from rag_assets.core.routing.subtree import DocumentRouting
from rag_assets.core.tables import markdown_table
from rag_assets.core.text import first_words

_LEADER = re.compile(r"(?:\s*\.){3,}\s*|\s*\$\s*$")


def statement_context(state: DocumentRouting, heading: int) -> str:
    """A heading read as its path and its table's row labels (other content as it is)."""
    own = [state.nodes[c] for c, h in state.section.items() if h == heading]
    if not any(n.block == "table_row" for n in own):
        return heading_context(state, heading)
    parts = [_LEADER.sub(" ", n.text.split(" | ")[0]).strip() if n.block == "table_row" else n.text for n in own]
    node = state.nodes[heading]
    path = PATH_SEPARATOR.join(node.heading_path or (node.text,))
    return f"{path}: {first_words('; '.join(p for p in parts if p), CONTEXT_WORDS)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--collection", default="financebench")
    parser.add_argument("--split", default="dev,test")
    args = parser.parse_args()
    session, questions = open_collection(args.collection, args.split, keep=lambda q: bool(q.gold_pages and q.gold_doc))
    router = session.router("encoder")
    threshold = router.thresholds.expand

    def embed(texts: list[str]) -> np.ndarray:
        vectors = np.asarray(router.encoder.encode(texts, progress=False), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    counts: Counter = Counter()
    rows = []
    for q in questions:
        doc = next((d for d in session.trees if same_document(d, q.gold_doc)), None)
        if doc is None:
            continue
        state = DocumentRouting(doc, session.trees[doc])
        headings = [n.node_id for n in state.nodes if n.kind == STRUCTURE and n.node_id]
        on_gold = Counter(
            state.section[n.node_id]
            for n in state.nodes
            if n.node_id in state.section
            and n.page_start
            and any(n.page_start <= page <= max(n.page_end, n.page_start) for page in q.gold_pages)
        )
        if not on_gold or not headings:
            continue
        gold = on_gold.most_common(1)[0][0]
        question = embed([q.query])[0]
        cells = [q.qid, state.nodes[gold].text[:40]]
        for name, context in (("as scored", heading_context), ("row labels", statement_context)):
            scores = embed([context(state, h) for h in headings]) @ question
            score = scores[headings.index(gold)]
            rank = int((scores > score).sum())
            counts[name, "top 5"] += rank < 5
            counts[name, "expanded"] += bool(score >= threshold)
            cells.append(f"{score:.3f} (rank {rank + 1} of {len(headings)})")
        counts["questions"] += 1
        rows.append(cells)
    print(markdown_table(["question", "gold heading", "score as scored", "score on row labels"], rows))
    print()
    n = counts["questions"]
    print(f"{n} questions; expand threshold {threshold}")
    for name in ("as scored", "row labels"):
        print(f"{name}: gold heading in the top 5 {counts[name, 'top 5']}, at the threshold {counts[name, 'expanded']}")


if __name__ == "__main__":
    main()
