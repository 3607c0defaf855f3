"""Training questions made from the corpus itself, for collections without a labelled question set.

Two kinds, both labelled later by the oracle teacher on the real Retrieval SubTrees of the query
(so they train the router on the same views it will see):
- `cloze` (inverse cloze): one sentence of a content node is the query and that sentence is its
  gold evidence; the oracle then ANSWERs the node that holds it. The encoder router takes the
  sentence out of the node's text when it trains on it (`encoder_training._strip_query`), so it
  learns what the rest of a paragraph is about rather than string matching.
- `heading`: a section's heading (with its parent heading when short) is the query and the
  section's path its gold `section_path`; the oracle ANSWERs the section's content and EXPANDs the
  headings on the way, which is where EXPAND decisions are learnt.
- `row`: a table row that carries its column headers ("Purchases of property, plant and
  equipment | 2018: (1,577) | 2017: (1,373)") asked for one of its figures ("What was Purchases of
  property, plant and equipment in 2018 in 3M 2018 10K?", the document named by its file name, as
  FinanceBench's questions name their filing); the row is its gold evidence, so the oracle
  ANSWERs the row: statements' rows are where a filing's figures are.
Sampling is deterministic (seeded by collection and node), spread over documents.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import CONTENT, STRUCTURE, TreeNode

SYNTHETIC_SPLIT = "synthetic"
SYNTHETIC_KINDS = ("cloze", "heading", "row")
DEFAULT_SYNTHETIC_KINDS = ("cloze", "heading")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
MIN_SENTENCE_WORDS = 8
MAX_SENTENCE_WORDS = 40
MIN_NODE_WORDS = 25


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def cloze_candidates(doc_id: str, nodes: Sequence[TreeNode]) -> list[Question]:
    """One inverse-cloze question per content node with at least two sentences and enough words:
    its longest sentence within the length bounds is the query."""
    out = []
    for node in nodes:
        if node.kind != CONTENT or len(node.text.split()) < MIN_NODE_WORDS:
            continue
        sentences = _sentences(node.text)
        usable = [s for s in sentences if MIN_SENTENCE_WORDS <= len(s.split()) <= MAX_SENTENCE_WORDS]
        if len(sentences) < 2 or not usable:
            continue
        query = max(usable, key=lambda s: (len(s.split()), s))
        out.append(
            Question(
                f"synthetic:cloze:{doc_id}:{node.node_id}",
                query,
                evidences=(query,),
                gold_doc=nodes[0].text,
                split=SYNTHETIC_SPLIT,
                extra={"kind": "cloze"},
            )
        )
    return out


def heading_candidates(doc_id: str, nodes: Sequence[TreeNode]) -> list[Question]:
    """One question per heading (not the title) with own content: the heading as the query (short
    ones with their parent heading), its path as the gold section path."""
    has_content = {n.parent_id for n in nodes if n.kind == CONTENT}
    out = []
    for node in nodes:
        if node.kind != STRUCTURE or node.parent_id is None or node.node_id not in has_content:
            continue
        path = tuple(node.heading_path[1:])  # a heading's path ends with itself; the title is skipped
        query = node.text if len(node.text.split()) >= 3 or len(path) < 2 else f"{path[-2]}: {node.text}"
        out.append(
            Question(
                f"synthetic:heading:{doc_id}:{node.node_id}",
                query,
                section_path=path,
                gold_doc=nodes[0].text,
                split=SYNTHETIC_SPLIT,
                extra={"kind": "heading"},
            )
        )
    return out


_FIGURE = re.compile(r"\d")
_LABEL_WORD = re.compile(r"[A-Za-z]{3,}")
MIN_LABEL_WORDS = 2


def _document_name(doc_id: str) -> str:
    """A document's file name as words ("financebench/3M_2018_10K.pdf" -> "3M 2018 10K")."""
    stem = doc_id.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return " ".join(re.split(r"[_\s]+", stem)).strip()


def row_candidates(doc_id: str, nodes: Sequence[TreeNode]) -> list[Question]:
    """One question per table row whose first cell is a label of words and whose first headed
    cell holds a figure: the label and that cell's column header ask for the figure, in the
    document named by its file name; the row is the gold evidence."""
    out = []
    name = _document_name(doc_id)
    for node in nodes:
        if node.block != "table_row":
            continue
        label, *cells = [cell.strip() for cell in node.text.split(" | ")]
        headed = [cell.split(": ", 1) for cell in cells if ": " in cell]
        if len(_LABEL_WORD.findall(label)) < MIN_LABEL_WORDS or not headed:
            continue
        header, value = headed[0]
        if not _FIGURE.search(value) or not header or len(header.split()) > 6:
            continue
        out.append(
            Question(
                f"synthetic:row:{doc_id}:{node.node_id}",
                f"What was {label} in {header} in {name}?",
                evidences=(node.text,),
                gold_doc=nodes[0].text,
                split=SYNTHETIC_SPLIT,
                extra={"kind": "row"},
            )
        )
    return out


def synthetic_questions(
    trees: Mapping[str, Sequence[TreeNode]],
    count: int,
    *,
    kinds: Sequence[str] = DEFAULT_SYNTHETIC_KINDS,
    seed: str = "",
) -> list[Question]:
    """Up to `count` synthetic questions, split evenly between `kinds` and round-robin over
    documents (a large document cannot crowd out the others); deterministic for a given seed."""
    unknown = sorted(set(kinds) - set(SYNTHETIC_KINDS))
    if unknown:
        raise ValueError(f"unknown synthetic question kinds {unknown}; expected some of {list(SYNTHETIC_KINDS)}")
    if count <= 0 or not kinds:
        return []
    makers = {"cloze": cloze_candidates, "heading": heading_candidates, "row": row_candidates}
    chosen: list[Question] = []
    share = [count // len(kinds) + (1 if i < count % len(kinds) else 0) for i in range(len(kinds))]
    for kind, quota in zip(kinds, share):
        per_doc = []
        for doc_id in sorted(trees):
            candidates = makers[kind](doc_id, trees[doc_id])
            rng = random.Random(hashlib.sha256(f"{seed}/{kind}/{doc_id}".encode()).hexdigest())
            rng.shuffle(candidates)
            if candidates:
                per_doc.append(candidates)
        picked: list[Question] = []
        while len(picked) < quota and any(per_doc):
            for candidates in per_doc:
                if candidates and len(picked) < quota:
                    picked.append(candidates.pop())
        chosen += picked
    # Identical queries (boilerplate repeated across near-duplicate documents) are kept once.
    return list({q.query: q for q in chosen}.values())
