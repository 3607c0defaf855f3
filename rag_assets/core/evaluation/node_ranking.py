"""How well a node scorer ranks a question's gold nodes among the content nodes its routed
documents show: the quantity the router's own choices rest on.

Why measure ranks and not only routed evidence: the own-choice rule answers the nodes within a
margin of the question's best-scored node, so the evidence it can reach in few words is bounded by
where the gold node ranks. When the gold node is the best-scored one, one node of evidence holds
it; when it is 30th, no margin reaches it without most of the budget. A ranking table tells a
weak scorer from a weak rule (the margin curve of `benchmarks/cross_fitted_evidence.py` bounds the
rule; this bounds what any rule could do with a scorer's order), and it compares scorers that are
not routers at all (a cross-encoder over (question, node in its heading context), the passage
reranker's model) on the same candidates, paired by question.

A question's candidates are the content nodes shown in any of its labelled views (one document's
page on nq_wiki, several rounds' views on the deep manuals); its gold nodes are the views' gold
ANSWER nodes (the oracle teacher's labels). A node scored in several views keeps its best score.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.evaluation.evidence import Estimate, estimate
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.scoring_router import content_context

NodeKey = tuple[str, int]  # (doc_id, node_id)
TOP_K = 3  # "gold within the top k": about the nodes an own choice of 60% of the words holds on nq_wiki


@dataclass(frozen=True, slots=True)
class QuestionCandidates:
    """One question's candidate content nodes (as the router reads them) and its gold ones."""

    qid: str
    query: str
    texts: dict[NodeKey, str]  # content node -> its text under its heading path
    gold: frozenset[NodeKey]


@dataclass(frozen=True, slots=True)
class GoldRank:
    """Where one scorer ranked a question's first gold node (1 = best scored) among `candidates`."""

    scorer: str
    qid: str
    rank: int
    candidates: int


def question_candidates(qid: str, examples: Sequence[RoutingExample]) -> QuestionCandidates:
    """The content nodes `examples` (one question's labelled views) show, and the gold ANSWER
    nodes among them."""
    if not examples:
        raise ValueError(f"question {qid}: no labelled view to take candidates from")
    texts: dict[NodeKey, str] = {}
    gold: set[NodeKey] = set()
    for example in examples:
        doc = example.state.doc_id
        for n in sorted(example.view.visible_content_ids):
            texts.setdefault((doc, n), content_context(example.state.nodes, n))
        gold |= {(doc, n) for n in example.answer_ids if n in example.view.visible_content_ids}
    return QuestionCandidates(qid, examples[0].query, texts, frozenset(gold))


def first_gold_rank(scores: Mapping[NodeKey, float], gold: Collection[NodeKey]) -> int | None:
    """The 1-based rank of the best-ranked gold node when `scores` are sorted best first (ties go
    to the gold node's disadvantage: a scorer gets no credit for a tie it did not break), or None
    when no gold node is scored."""
    scored_gold = [scores[k] for k in gold if k in scores]
    if not scored_gold:
        return None
    best = max(scored_gold)
    return 1 + sum(1 for k, s in scores.items() if s >= best and k not in gold)


def rank_questions(
    scorer: str,
    questions: Sequence[QuestionCandidates],
    score: Callable[[QuestionCandidates], Mapping[NodeKey, float]],
) -> list[GoldRank]:
    """Each question's first gold rank under `score` (candidates -> a score per node). Questions
    without a gold node among their candidates are left out: no scorer can rank them."""
    ranks = []
    for question in questions:
        if not question.gold:
            continue
        scores = score(question)
        missing = question.texts.keys() - scores.keys()
        if missing:
            raise ValueError(f"scorer {scorer!r} left {len(missing)} candidate nodes of {question.qid} unscored")
        rank = first_gold_rank(scores, question.gold)
        if rank is None:
            raise ValueError(f"scorer {scorer!r}: question {question.qid} has gold nodes but none was scored")
        ranks.append(GoldRank(scorer, question.qid, rank, len(question.texts)))
    return ranks


@dataclass(frozen=True, slots=True)
class RankingSummary:
    """Per scorer: the share of questions whose gold node it ranked first, within `TOP_K`, the mean
    reciprocal rank, and the paired difference in ranked-first share against `baseline`."""

    scorer: str
    questions: int
    first: Estimate
    top_k: Estimate
    reciprocal: Estimate
    first_vs_baseline: Estimate | None  # None for the baseline itself


def summarise_ranks(ranks: Sequence[GoldRank], baseline: str) -> list[RankingSummary]:
    """One summary per scorer (in first-seen order), each paired with `baseline` on the questions
    both ranked."""
    by_scorer: dict[str, dict[str, GoldRank]] = {}
    for r in ranks:
        by_scorer.setdefault(r.scorer, {})[r.qid] = r
    if baseline not in by_scorer:
        raise ValueError(f"no ranks for the baseline scorer {baseline!r} (scorers: {', '.join(by_scorer)})")
    base = by_scorer[baseline]
    out = []
    for scorer, rows in by_scorer.items():
        ordered = list(rows.values())
        paired = [float(rows[q].rank == 1) - float(base[q].rank == 1) for q in rows if q in base]
        out.append(
            RankingSummary(
                scorer,
                len(ordered),
                estimate([float(r.rank == 1) for r in ordered]),
                estimate([float(r.rank <= TOP_K) for r in ordered]),
                estimate([1.0 / r.rank for r in ordered]),
                None if scorer == baseline else estimate(paired),
            )
        )
    return out


def ranking_table(summaries: Sequence[RankingSummary]) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of the ranking summaries, intervals in brackets."""
    header = ["scorer", "questions", "gold ranked first", f"gold in top {TOP_K}", "mean reciprocal rank",
              "Δ ranked first vs baseline"]  # fmt: skip
    body = [
        [
            s.scorer,
            str(s.questions),
            s.first.text(),
            s.top_k.text(),
            s.reciprocal.text(),
            "" if s.first_vs_baseline is None else s.first_vs_baseline.text(signed=True),
        ]
        for s in summaries
    ]
    return header, body
