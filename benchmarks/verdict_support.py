"""Can the reader judge which cited node a yes/no answer rests on? For the stored answers to yes/no
questions that have gold nodes (core/evaluation/supporting_precision.py), every cited node is shown
to the reader alone, and its verdict margin (mean log-probability of "Yes" minus "No" as the start
of its reply, `verdict.yes_no_verdicts`' scoring) is compared with the margin it gives the question
without evidence. A node that settles the question should move the reader toward the gold verdict
more than a node that does not; printed: how far gold and other nodes move it (AUC of the shift's
size, gold against the rest: 0.5 is no better than chance), how often each node alone gives the gold
verdict, and the precision of "supports the answer's verdict" at margin thresholds over the
citations the stored answers mark as supporting.

    RAG_DATA_DIR=dagster_home/data-datasets .venv/bin/python -m benchmarks.verdict_support -c conditionalqa
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence

from tqdm import tqdm

from benchmarks.common import open_collection
from benchmarks.records import add_record_option, keep_figures
from rag_assets.core.answer_metrics import answer_right, normalize_answer, yes_no
from rag_assets.core.answering.reader_prompts import reader_messages
from rag_assets.core.answering.verdict import VERDICTS, asks_yes_no
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.engines.base import ChatMessages, LLMEngine
from rag_assets.core.evaluation.supporting_precision import citations, has_gold_node, is_gold_node
from rag_assets.core.settings import catalogue_file
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.lineage import AnswerRecord, load_answers
from rag_assets.core.store.question_table import load_question_rows

THRESHOLDS = (0.0, 0.5, 1.0)


def margins(engine: LLMEngine, chats: Sequence[ChatMessages], batch: int = 16) -> list[float]:
    """Per chat, the reader's "Yes" minus "No" score (each chat scored once, however often it recurs)."""
    keys = [json.dumps(chat) for chat in chats]
    unique = list(dict.fromkeys(keys))
    scored: dict[str, float] = {}
    for start in tqdm(range(0, len(unique), batch), desc="reader verdicts", unit="batch"):
        part = unique[start : start + batch]
        scores = engine.score_continuations([json.loads(k) for k in part], [list(VERDICTS)] * len(part))
        scored.update((k, yes - no) for k, (yes, no) in zip(part, scores))
    return [scored[k] for k in keys]


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """The chance a positive scores above a negative (ties count half)."""
    pairs = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return pairs / (len(positive) * len(negative))


def verdict_nodes(
    records: Sequence[AnswerRecord], questions: Mapping[str, Question], max_citations: int
) -> tuple[list[dict], list[ChatMessages]]:
    """The cited nodes of the verdict answers to yes/no questions with gold nodes, and the chats
    to score: each question without evidence (`blank`), then each node alone."""
    nodes: list[dict] = []
    chats: list[ChatMessages] = []
    for record in records:
        question = questions.get(record.qid)
        verdict = yes_no(record.answer)
        gold = sorted({normalize_answer(a) for a in question.answers} & {"yes", "no"}) if question else []
        if question is None or verdict is None or len(gold) != 1 or not has_gold_node(question):
            continue
        if not asks_yes_no(record.question):
            continue
        blank = len(chats)
        chats.append(reader_messages(record.question, ""))
        right = bool(answer_right(record.answer, question.answers))
        for n, cited in enumerate(citations(record)[:max_citations]):
            nodes.append(
                dict(
                    blank=blank,
                    chat=len(chats),
                    marked=n < record.supporting,
                    gold=is_gold_node(question, cited),
                    toward=1.0 if verdict == "yes" else -1.0,
                    gold_yes=gold[0] == "yes",
                    right=right,
                )
            )
            chats.append(reader_messages(record.question, cited.text))
    return nodes, chats


def report(collection: str, nodes: list[dict], scored: Sequence[float]) -> list[tuple[str, float | str]]:
    """Prints the shifts, the node-alone verdicts and the thresholds' precision; the figures kept."""
    for node in nodes:
        shift = scored[node["chat"]] - scored[node["blank"]]
        node.update(
            shift=abs(shift), push=node["toward"] * shift, alone_gold=(scored[node["chat"]] >= 0) == node["gold_yes"]
        )
    figures: list[tuple[str, float | str]] = []
    print(f"{collection}: {len(nodes)} cited nodes of verdict answers to yes/no questions")
    gold_shifts = [n["shift"] for n in nodes if n["gold"]]
    other_shifts = [n["shift"] for n in nodes if not n["gold"]]
    if gold_shifts and other_shifts:
        value = auc(gold_shifts, other_shifts)
        print(f"AUC of the verdict shift, gold nodes against the rest: {value:.3f}")
        figures.append((f"{collection}: AUC of the reader's verdict shift, gold nodes against the rest", value))
    for name, which in (("gold nodes", True), ("other nodes", False)):
        chosen = [n for n in nodes if n["gold"] == which]
        if chosen:
            share = sum(n["alone_gold"] for n in chosen) / len(chosen)
            print(f"{name}: {len(chosen)}, shown alone the reader gives the gold verdict on {share:.3f}")
            figures.append((f"{collection}: {name} alone give the gold verdict", share))
    print(f"{'answers':<7} {'push >':>6} {'marked':>6} {'gold':>5} {'precision':>9}")
    for which in ("all", "right"):
        for threshold in THRESHOLDS:
            kept = [n for n in nodes if n["marked"] and (which == "all" or n["right"]) and n["push"] > threshold]
            gold = sum(n["gold"] for n in kept)
            precision = f"{gold / len(kept):.3f}" if kept else "-"
            print(f"{which:<7} {threshold:>6.1f} {len(kept):>6} {gold:>5} {precision:>9}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-c", "--collection", required=True)
    parser.add_argument("--max-citations", type=int, default=10, help="cited nodes per answer shown (default: 10)")
    add_record_option(parser)
    args = parser.parse_args()
    with catalogue_connection(catalogue_file(), read_only=True) as con:
        questions = {q.qid: q for q in load_question_rows(con, args.collection)}
        records = load_answers(con, args.collection, source="evaluation")
    nodes, chats = verdict_nodes(records, questions, args.max_citations)
    if not nodes:
        raise SystemExit(f"{args.collection}: no stored verdict answer to a yes/no question with gold nodes")
    session, _ = open_collection(args.collection)
    figures = report(args.collection, nodes, margins(session.engine, chats))
    if args.record:
        keep_figures("benchmarks.verdict_support", figures)


if __name__ == "__main__":
    main()
