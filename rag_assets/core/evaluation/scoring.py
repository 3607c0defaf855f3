"""Per-answer evaluation metrics and their aggregation per strategy.

Every produced answer (a row of the `answers` table) is scored against its question's gold
labels. A metric is computed only where it applies, so the aggregates never hold NaN:

answer metrics (the reader's output)
- `em`: containment exact match after SQuAD normalisation (short answers, yes/no included);
- `f1`: best token F1 against any gold answer (short answers);
- `yes_no_acc`: the answer's leading yes/no matches a yes/no gold answer (ConditionalQA style);
- `rouge_l`: ROUGE-L F-measure for long gold answers (more than `LONG_ANSWER_WORDS` words, the
  e-manual paragraphs), where containment and token F1 say little;
- `correct`: the gold answer's figures are all stated within 1% (scale and percent read), or its
  leading yes/no is the answer's (`answer_correctness`; golds holding figures or a leading verdict,
  not a bare yes/no); `gold_contained`: the normalised long gold answer is in the answer, for long
  golds with neither;
evidence metrics (what the reader saw, independent of the reader)
- `passage_hit`: a gold short answer occurs in the evidence (not for yes/no gold: "yes" is not
  in a document);
- `evidence_recall`: the fraction of gold evidence lines (ConditionalQA page lines, tags
  stripped) found among the cited nodes' texts;
- `section_hit`: a cited node's heading path lies under the gold section path (e-manuals; the
  document title, the first heading of every path, is skipped as in the oracle teacher);
- `evidence_words`: length of the evidence in words;
attribution and echoes
- `first_cite_gold`: the answer's first citation (the node it rests on, core/answering/attribution.py)
  is gold: it holds a gold short answer or a gold evidence line, or lies under the gold section
  (questions with any of those labels; an answer without citations scores 0);
- `echoed`: the reader echoed prompt text (cut off at answer time, or still in the stored text);
cost
- `router_prompt_tokens`, `router_output_tokens`, `engine_calls` per question (means) and the
  wall time per question, aggregated as `seconds_p50` and, where questions were timed one by one
  (their seconds differ), `seconds_p95`: a strategy that reads its questions in one batch stores
  the batch's mean for each, whose p95 would only repeat the p50.

Every rate metric of the main comparison also has a 95% bootstrap interval over its questions
(`metric_intervals`), since a reader-based row rests on a sample of questions.

Questions without gold answers (not answerable) get no answer metrics but still evidence and cost
metrics.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from rag_assets.core.answer_metrics import (
    answer_right,
    contains_answer,
    normalize_answer,
    rouge_l,
    token_f1,
    word_count,
    yes_no_correct,
)
from rag_assets.core.answering.echo import echoed
from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.evaluation.answer_correctness import correctness_metrics
from rag_assets.core.routing.metrics import mean_interval

LONG_ANSWER_WORDS = 16
HEADING_SEPARATOR = " > "
_TAG = re.compile(r"<[^>]+>")

ANSWER_METRICS = ("right", "f1", "yes_no_acc", "rouge_l", "correct", "gold_contained")
EVIDENCE_METRICS = ("passage_hit", "evidence_recall", "section_hit", "page_hit", "evidence_words")
TRUST_METRICS = ("first_cite_gold", "echoed")
COST_METRICS = ("router_prompt_tokens", "router_output_tokens", "engine_calls", "seconds_p50", "seconds_p95")
# The order metrics appear in tables and in summary.json.
METRIC_ORDER = ANSWER_METRICS + EVIDENCE_METRICS + TRUST_METRICS + COST_METRICS
# Metrics that are fractions in [0, 1] (plotted on one axis).
RATE_METRICS = (*ANSWER_METRICS, "passage_hit", "evidence_recall", "section_hit", "page_hit", *TRUST_METRICS)


class ScorableAnswer(Protocol):
    """What scoring reads from an answer (an `AnswerRecord` or any row with these fields)."""

    qid: str
    strategy: str
    grid: str
    grid_value: int
    answer: str
    evidence: str
    evidence_words: int
    cited_texts: Sequence[str]
    cited_heading_paths: Sequence[str]
    router_prompt_tokens: int
    router_output_tokens: int
    engine_calls: int
    seconds: float


@dataclass(frozen=True, slots=True)
class ScoredAnswer:
    qid: str
    strategy: str
    grid: str  # '' for the main comparison
    grid_value: int  # -1 when grid == ''
    metrics: dict[str, float] = field(default_factory=dict)  # only the metrics that apply


def is_long_answer(answers: Sequence[str]) -> bool:
    return bool(answers) and max(word_count(a) for a in answers) > LONG_ANSWER_WORDS


def is_yes_no(answers: Sequence[str]) -> bool:
    return bool(answers) and all(normalize_answer(a) in ("yes", "no") for a in answers)


def answer_metrics(prediction: str, answers: Sequence[str]) -> dict[str, float]:
    """The answer metrics that apply to these gold answers (none when there is no gold answer)."""
    answers = [a for a in answers if normalize_answer(a)]
    if not answers:
        return {}
    if is_long_answer(answers):
        return {"rouge_l": rouge_l(prediction, answers), **correctness_metrics(prediction, answers)}
    # right: holds a gold answer (yes/no golds: the right verdict), the rule the default form is chosen by
    metrics = {"right": float(bool(answer_right(prediction, answers))), "f1": token_f1(prediction, answers)}
    verdict = yes_no_correct(prediction, answers)
    if verdict is not None:
        metrics["yes_no_acc"] = float(verdict)
    correctness = correctness_metrics(prediction, answers)
    metrics.update({k: v for k, v in correctness.items() if k == "correct"})  # short golds' containment: right
    return metrics


def passage_hit(evidence: str, answers: Sequence[str]) -> float | None:
    """1.0 when a gold short answer occurs in the evidence; None for long or yes/no gold."""
    answers = [a for a in answers if normalize_answer(a)]
    if not answers or is_long_answer(answers) or is_yes_no(answers):
        return None
    return float(contains_answer(evidence, answers))


def evidence_recall(cited_texts: Sequence[str], evidences: Sequence[str]) -> float | None:
    """Fraction of gold evidence lines among the cited texts (None without gold evidence).

    A line is found when a cited text equals it after normalisation, or contains it (lines over
    20 characters), or is a sentence-split part of it (cited texts over 20 characters)."""
    gold = [t for t in (normalize_answer(_TAG.sub(" ", e)) for e in evidences) if t]
    if not gold:
        return None
    cited = [t for t in (normalize_answer(c) for c in cited_texts) if t]

    def found(line: str) -> bool:
        return any(line == t or (len(line) > 20 and line in t) or (len(t) > 20 and t in line) for t in cited)

    return sum(found(line) for line in gold) / len(gold)


def section_hit(cited_heading_paths: Sequence[str | Sequence[str]], section_path: Sequence[str]) -> float | None:
    """1.0 when a cited node's heading path (title first) lies under the gold section path."""
    gold = [normalize_answer(p) for p in section_path]
    if not gold:
        return None
    for path in cited_heading_paths:
        parts = path.split(HEADING_SEPARATOR) if isinstance(path, str) else list(path)
        if [normalize_answer(h) for h in parts[1 : 1 + len(gold)]] == gold:
            return 1.0
    return 0.0


_PAGES = re.compile(r"^pp?\. (\d+)(?:-(\d+))?$")


def cited_pages(pages: str) -> range:
    """The pages of a citation's "p. 12" / "pp. 12-13" (empty without pages)."""
    found = _PAGES.match(pages.strip())
    if not found:
        return range(0)
    first = int(found.group(1))
    return range(first, int(found.group(2) or first) + 1)


def same_document(doc_id: str, gold_doc: str) -> bool:
    """The cited document is the gold one: its id, or its file name with or without extension
    (`financebench/ADOBE_2015_10K.pdf` for `ADOBE_2015_10K`)."""
    tail = doc_id.rsplit("/", 1)[-1]
    return gold_doc in (doc_id, tail, tail.rsplit(".", 1)[0])


def page_hit(cited: Sequence[tuple[str, str]], gold_doc: str, gold_pages: Sequence[int]) -> float | None:
    """1.0 when a cited node (doc id, "p. 12") of the gold document lies on a gold page; None
    without gold pages."""
    if not gold_pages or not gold_doc:
        return None
    gold = set(gold_pages)
    return float(any(same_document(doc, gold_doc) and gold.intersection(cited_pages(pages)) for doc, pages in cited))


def evidence_scores(
    evidence: str,
    cited_texts: Sequence[str],
    cited_heading_paths: Sequence[str | Sequence[str]],
    question: Question,
    cited_places: Sequence[tuple[str, str]] = (),
) -> dict[str, float]:
    """The evidence metrics the question's gold labels allow: passage hit (short answers in the
    evidence), evidence recall (gold lines among the cited texts), section hit (a cited node under
    the gold section), page hit (a cited node, `cited_places`' (doc id, "p. 12"), on a gold page)."""
    out: dict[str, float] = {}
    for name, value in (
        ("passage_hit", passage_hit(evidence, question.answers)),
        ("evidence_recall", evidence_recall(list(cited_texts), question.evidences)),
        ("section_hit", section_hit(list(cited_heading_paths), question.section_path)),
        ("page_hit", page_hit(cited_places, question.gold_doc, question.gold_pages)),
    ):
        if value is not None:
            out[name] = value
    return out


def first_citation_gold(
    cited_texts: Sequence[str],
    cited_heading_paths: Sequence[str],
    question: Question,
    cited_places: Sequence[tuple[str, str]] = (),
) -> float | None:
    """1.0 when the first citation is a gold node (it holds a short gold answer or a gold line,
    lies in the gold section, or on a gold page: `cited_places`' (doc id, "p. 12")); None when
    the question has no gold to tell."""
    answers = [a for a in question.answers if normalize_answer(a)]
    short = bool(answers) and not is_long_answer(answers) and not is_yes_no(answers)
    paged = bool(question.gold_pages and question.gold_doc and cited_places)
    if not (short or question.evidences or question.section_path or paged):
        return None
    if not cited_texts:
        return 0.0
    first, path = cited_texts[0], cited_heading_paths[0] if cited_heading_paths else ""
    gold = (
        (short and contains_answer(first, answers))
        or bool(evidence_recall([first], question.evidences))
        or section_hit([path], question.section_path) == 1.0
        or (paged and page_hit(cited_places[:1], question.gold_doc, question.gold_pages) == 1.0)
    )
    return float(gold)


def score_answer(
    answer: ScorableAnswer, question: Question | None, cited_places: Sequence[tuple[str, str]] = ()
) -> ScoredAnswer:
    """All metrics of one answer; gold-based ones only when `question` has that gold label
    (`cited_places`: each citation's (doc id, "p. 12"), for page hit on paged documents)."""
    metrics: dict[str, float] = {}
    if question is not None:
        metrics.update(answer_metrics(answer.answer, question.answers))
        texts, paths = answer.cited_texts, answer.cited_heading_paths
        metrics.update(evidence_scores(answer.evidence, texts, paths, question, cited_places))
        first = first_citation_gold(texts, paths, question, cited_places)
        if first is not None:
            metrics["first_cite_gold"] = first
    metrics["echoed"] = float(bool(getattr(answer, "echo", "")) or echoed(answer.answer))
    metrics["evidence_words"] = float(answer.evidence_words)
    metrics["router_prompt_tokens"] = float(answer.router_prompt_tokens)
    metrics["router_output_tokens"] = float(answer.router_output_tokens)
    metrics["engine_calls"] = float(answer.engine_calls)
    metrics["seconds"] = float(answer.seconds)
    return ScoredAnswer(answer.qid, answer.strategy, answer.grid, answer.grid_value, metrics)


def score_answers(
    answers: Iterable[ScorableAnswer],
    questions: Mapping[str, Question],
    places: Callable[[ScorableAnswer], Sequence[tuple[str, str]]] | None = None,
) -> list[ScoredAnswer]:
    """Every answer scored; `places` gives an answer's cited (doc id, pages) where pages are known."""
    return [score_answer(a, questions.get(a.qid), places(a) if places else ()) for a in answers]


def _summarise(scored: Sequence[ScoredAnswer]) -> dict[str, float]:
    values: dict[str, list[float]] = defaultdict(list)
    for s in scored:
        for name, value in s.metrics.items():
            if math.isfinite(value):
                values[name].append(value)
    out: dict[str, float] = {}
    for name in METRIC_ORDER:
        if name in values:
            out[name] = float(np.mean(values[name]))
    seconds = values.get("seconds")
    if seconds:
        out["seconds_p50"] = float(np.percentile(seconds, 50))
        if max(seconds) - min(seconds) > 1e-9 * max(seconds):  # timed per question, not a batch mean
            out["seconds_p95"] = float(np.percentile(seconds, 95))
    out["questions"] = float(len({s.qid for s in scored}))
    return {name: out[name] for name in (*METRIC_ORDER, "questions") if name in out}


def aggregate(scored: Iterable[ScoredAnswer]) -> dict[str, dict[str, float]]:
    """strategy -> metric -> mean over the main-comparison answers (grid == ''), in first-seen
    strategy order. A metric that applies to no answer of a strategy is absent, never NaN."""
    groups: dict[str, list[ScoredAnswer]] = {}
    for s in scored:
        if not s.grid:
            groups.setdefault(s.strategy, []).append(s)
    return {strategy: _summarise(rows) for strategy, rows in groups.items()}


def metric_intervals(scored: Iterable[ScoredAnswer]) -> dict[str, dict[str, tuple[float, float]]]:
    """strategy -> rate metric -> its mean's 95% bootstrap interval over the main-comparison
    answers that have the metric (fixed seed: the same answers, the same interval). Answers are
    taken in question order, so two strategies with the same per-question values get the same
    interval whatever order the catalogue returned them in."""
    values: dict[str, dict[str, list[float]]] = {}
    for s in sorted(scored, key=lambda s: s.qid):
        if s.grid:
            continue
        for name in RATE_METRICS:
            if name in s.metrics and math.isfinite(s.metrics[name]):
                values.setdefault(s.strategy, {}).setdefault(name, []).append(s.metrics[name])
    return {strategy: {m: mean_interval(v) for m, v in metrics.items()} for strategy, metrics in values.items()}


def aggregate_grid(scored: Iterable[ScoredAnswer]) -> dict[str, dict[int, dict[str, float]]]:
    """grid -> grid value (ascending) -> metric -> mean, for the test-time scaling rows."""
    groups: dict[str, dict[int, list[ScoredAnswer]]] = {}
    for s in scored:
        if s.grid:
            groups.setdefault(s.grid, {}).setdefault(s.grid_value, []).append(s)
    return {grid: {value: _summarise(points[value]) for value in sorted(points)} for grid, points in groups.items()}


def headline_metrics(results: Mapping[str, Mapping[str, float]]) -> list[str]:
    """The key metrics present in `results`, in table order: answer quality, evidence, cost."""
    present = {m for metrics in results.values() for m in metrics}
    return [m for m in (*RATE_METRICS, "evidence_words", "router_prompt_tokens", "seconds_p50") if m in present]


def primary_answer_metric(metrics: Iterable[str]) -> str | None:
    """The answer metric a plot or a scaling curve shows first."""
    present = set(metrics)
    return next((m for m in ("f1", "rouge_l", "yes_no_acc", "right") if m in present), None)


def primary_evidence_metric(metrics: Iterable[str]) -> str | None:
    present = set(metrics)
    return next((m for m in ("evidence_recall", "section_hit", "passage_hit") if m in present), None)


def routing_metric(metrics: Iterable[str]) -> str | None:
    """What rdr2's routing settings are chosen by: page hit where the questions carry gold pages,
    else the primary evidence metric. On a paged set the gold evidence is a page's text, and a
    cited table row ("Revenue | 2022: 1,234") is never a substring of it: evidence recall scores
    0 for a router that cites the gold page's rows (FinanceBench's oracle: on 16 of the 28 dev +
    test questions whose gold page it reaches), so it would steer the settings away from rows."""
    present = set(metrics)
    return "page_hit" if "page_hit" in present else primary_evidence_metric(present)
