"""The answer-aware oracle teacher: a visible content node that is gold for the question -> ANSWER;
a collapsed heading with a gold node among its unseen content -> EXPAND; nothing -> refuse.

Which nodes are gold (`gold_content_ids`, over the whole document, so every view of a question
agrees on them), from the most precise label the question has:
1. gold evidence lines (conditionalqa, inverse-cloze synthetic questions): the content nodes
   holding one. The question's short answers are not used then: they are spans of those lines,
   and found elsewhere they are coincidences. A yes/no verdict is no span at all: conditionalqa's
   73 yes/no questions made every line with the word "no" or "yes" gold (130 lines over the dev
   pages besides the 543 evidence lines), labelling views that show no evidence as ANSWER views;
2. gold pages of this document (FinanceBench: its evidence "text" is the whole page as another
   tool extracted it, which matches no node line: labelled by it, the oracle row's page hit on
   FinanceBench was 0.172, below rag-hybrid's): on each gold page, the content nodes that share
   the most topic words with the question and its answers (the statement rows a metric is
   computed from, the paragraph a question asks about), every content node of a page where none
   shares one;
3. a gold section path (e-manuals): the content under that path;
4. short answers alone (Natural Questions, the built-in questions): the content nodes holding an
   answer that share the most topic words (not stopwords) with the question, heading path
   included. Why not every holder: a short answer recurs across a long page (a date, a name: up
   to 87 blocks of one nq_wiki page, 13 on the median question), and Natural Questions' own gold
   is one long answer, the passage that answers. Containment alone labelled dozens of nodes of a
   view gold; a teacher that precise is what a router can learn to rank first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag_assets.core.answer_metrics import contains_answer, normalize_answer
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import CONTENT, TreeNode
from rag_assets.core.index.reranking.labels import is_gold_document
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView
from rag_assets.core.routing.teachers.label import TeacherLabel, make_label

_TAG = re.compile(r"<[^>]+>")
VERDICTS = frozenset({"yes", "no"})
# Function words that say nothing about a question's topic (after `normalize_answer`).
_STOPWORDS = frozenset(
    """a an the of in on at to for by with from and or not is are was were be been being am do does did
    done has have had what which who whom whose when where why how that this these those it its as if
    than then so such can could will would should shall may might must i me my we our you your he him
    his she her they them their there here about into over after before up down out s""".split()  # noqa: SIM905
)


def _evidence_texts(evidences: Sequence[str]) -> list[str]:
    return [t for t in (normalize_answer(_TAG.sub(" ", e)) for e in evidences) if t]


def topic_words(text: str) -> set[str]:
    """The words of `text` that carry its topic: normalised, stopwords dropped."""
    return set(normalize_answer(text).split()) - _STOPWORDS


def gold_content_ids(
    nodes: Sequence[TreeNode],
    *,
    answers: Sequence[str] = (),
    evidences: Sequence[str] = (),
    section_path: Sequence[str] = (),
    query: str = "",
    pages: Sequence[int] = (),
) -> frozenset[int]:
    """The document's gold content nodes for a question (the module doc says which, and why);
    `pages` are the question's gold pages when this document is its gold document."""
    content = [n for n in nodes if n.kind == CONTENT]
    evidence = _evidence_texts(evidences)
    if evidence:
        texts = {n.node_id: normalize_answer(n.text) for n in content}
        lines = frozenset(
            n for n, text in texts.items() if any(e == text or (len(e) > 20 and e in text) for e in evidence)
        )
        if lines or not pages:
            return lines
    if pages:
        return _best_on_pages(content, pages, topic_words(" ".join((query, *answers))))
    if section_path:
        path = [normalize_answer(p) for p in section_path]
        return frozenset(
            n.node_id for n in content if [normalize_answer(h) for h in n.heading_path[1 : 1 + len(path)]] == path
        )
    spans = [a for a in answers if normalize_answer(a) not in VERDICTS]
    holders = [n for n in content if spans and contains_answer(n.text, spans)]
    if len(holders) <= 1 or not query:
        return frozenset(n.node_id for n in holders)
    return _most_on_topic(holders, topic_words(query))


def _most_on_topic(nodes: Sequence[TreeNode], asked: set[str]) -> frozenset[int]:
    """The nodes sharing the most topic words with `asked`, heading path included (all of them
    where none shares one)."""
    overlap = {n.node_id: len(asked & topic_words(" ".join((*n.heading_path, n.text)))) for n in nodes}
    best = max(overlap.values(), default=0)
    return frozenset(n for n, o in overlap.items() if o == best)


def _best_on_pages(content: Sequence[TreeNode], pages: Sequence[int], asked: set[str]) -> frozenset[int]:
    """On each gold page, its content nodes sharing the most topic words with `asked` (all of
    the page's nodes where none shares one)."""
    gold: set[int] = set()
    for page in pages:
        on_page = [n for n in content if n.page_start <= page <= max(n.page_end, n.page_start) and n.page_start]
        gold |= _most_on_topic(on_page, asked)
    return frozenset(gold)


def oracle_teacher(
    doc: DocumentRouting,
    view: SubtreeView,
    *,
    answers: Sequence[str] = (),
    evidences: Sequence[str] = (),
    section_path: Sequence[str] = (),
    query: str = "",
    pages: Sequence[int] = (),
) -> TeacherLabel:
    gold = gold_content_ids(
        doc.nodes, answers=answers, evidences=evidences, section_path=section_path, query=query, pages=pages
    )
    answer_ids = sorted(n for n in view.visible_content_ids if n in gold)
    expand_ids = sorted(
        h
        for h in view.collapsed_heading_ids
        if any(c in gold for c, heading in doc.section.items() if heading == h and c not in doc.seen)
    )
    return make_label(
        doc, answer_ids, expand_ids, f"gold answer/evidence/path matches: {answer_ids} {expand_ids}", "oracle"
    )


def oracle_label(doc: DocumentRouting, view: SubtreeView, question: Question) -> TeacherLabel:
    return oracle_teacher(
        doc,
        view,
        answers=question.answers,
        evidences=question.evidences,
        section_path=question.section_path,
        query=question.query,
        pages=question.gold_pages if is_gold_document(question, doc.doc_id, doc.title) else (),
    )
