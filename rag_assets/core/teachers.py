"""Teachers that label Retrieval SubTrees with router actions (the router's training targets).

Every teacher returns a `TeacherLabel` whose `target` is in the router grammar
(`format_actions`), so it trains the router directly, and keeps what it produced before
formatting (`raw`) for audit.

- `oracle_teacher` (answer-aware): a visible content node containing a gold answer or gold
  evidence -> ANSWER; a collapsed heading with such a node among its unseen content -> EXPAND; for
  section-path gold (e-manuals), content under the gold path -> ANSWER and headings on it with
  unseen content -> EXPAND; nothing -> refuse.
- `llm_teacher` (the paper's curation): any `LLMEngine` is asked, in ONE batched `generate` call,
  which shown paragraphs answer the question and which collapsed headings to unfold, as JSON
  (`{"answer": [ids], "expand": [ids]}`, both empty = refuse). The JSON is found tolerantly (code
  fences, prose around it, Python-style quotes); every id is validated against the view (ANSWER
  only on visible content, EXPAND only on collapsed headings) and invalid ids are dropped and
  counted. An output with no usable JSON, or whose ids were ALL invalid, is `failed`: it is kept
  for audit but excluded from training (a refusal would teach the router to refuse a document the
  teacher meant to answer from).
- `similarity_teacher` (question-only): the sentence embedder scores visible content nodes and
  collapsed headings (heading text + its unseen content) against the question; ANSWER above one
  threshold, EXPAND above another (best few first), else refuse. `calibrate_thresholds` picks
  both thresholds on a grid to maximise F1 against labelled views (e.g. the oracle on the train
  fold), with defaults when nothing is labelled.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from rag_assets.core.answer_metrics import contains_answer, normalize_answer
from rag_assets.core.engines.base import ChatMessages, LLMEngine
from rag_assets.core.router_io import format_actions
from rag_assets.core.subtree import DocumentRouting, SubtreeView
from rag_assets.core.tree import CONTENT

_TAG = re.compile(r"<[^>]+>")

FAILED = "failed"
KINDS = ("answer", "expand", "refuse")


@dataclass(frozen=True, slots=True)
class TeacherLabel:
    answer_ids: tuple[int, ...]
    expand_ids: tuple[int, ...]
    target: str  # in the router's output grammar ("" when failed)
    raw: str  # what the teacher produced before formatting (kept for audit)
    teacher: str = "oracle"
    failed: bool = False  # unusable teacher output: kept for audit, excluded from training
    invalid_ids: int = 0  # ids the teacher proposed that the view forbids (dropped)

    @property
    def kind(self) -> str:
        """'answer' | 'expand' | 'refuse' (the paper's ANS/EXP/REF), or 'failed'."""
        if self.failed:
            return FAILED
        return "answer" if self.answer_ids else "expand" if self.expand_ids else "refuse"


@dataclass(frozen=True, slots=True)
class TeacherTask:
    """One subtree to label: the question, the document state and the view as rendered."""

    query: str
    doc: DocumentRouting
    view: SubtreeView
    rendered: str


def _label(
    doc: DocumentRouting, answer_ids: Sequence[int], expand_ids: Sequence[int], raw: str, teacher: str, invalid: int = 0
) -> TeacherLabel:
    answers, expands = sorted(set(answer_ids)), sorted(set(expand_ids))
    target = format_actions([(n, doc.nodes[n].text) for n in answers], [(h, doc.nodes[h].text) for h in expands])
    return TeacherLabel(tuple(answers), tuple(expands), target, raw, teacher, False, invalid)


# --- oracle -------------------------------------------------------------------------------------


def _evidence_texts(evidences: Sequence[str]) -> list[str]:
    return [t for t in (normalize_answer(_TAG.sub(" ", e)) for e in evidences) if t]


def oracle_teacher(
    doc: DocumentRouting,
    view: SubtreeView,
    *,
    answers: Sequence[str] = (),
    evidences: Sequence[str] = (),
    section_path: Sequence[str] = (),
) -> TeacherLabel:
    evidence = _evidence_texts(evidences)
    path = [normalize_answer(p) for p in section_path]

    def is_gold(node_id: int) -> bool:
        node = doc.nodes[node_id]
        if node.kind != CONTENT:
            return False
        if answers and contains_answer(node.text, answers):
            return True
        text = normalize_answer(node.text)
        if any(e == text or (len(e) > 20 and e in text) for e in evidence):
            return True
        return bool(path) and [normalize_answer(h) for h in node.heading_path[1 : 1 + len(path)]] == path

    answer_ids = sorted(n for n in view.visible_content_ids if is_gold(n))
    expand_ids = sorted(
        h
        for h in view.collapsed_heading_ids
        if any(is_gold(c) for c, heading in doc.section.items() if heading == h and c not in doc.seen)
    )
    return _label(
        doc, answer_ids, expand_ids, f"gold answer/evidence/path matches: {answer_ids} {expand_ids}", "oracle"
    )


# --- LLM curation -------------------------------------------------------------------------------

CURATION_SYSTEM_PROMPT = (
    "You label training data for a document router. You see a question and one document's "
    "outline: one line per node, `id: text`, indented by depth. Headings are always shown; only "
    "some paragraphs are shown, the others are hidden under their heading.\n"
    "Choose the shown paragraphs that answer the question, and the headings whose hidden "
    "paragraphs may answer it.\n"
    'Reply with JSON only: {"answer": [paragraph ids], "expand": [heading ids]}\n'
    'If the document cannot answer the question, reply {"answer": [], "expand": []}'
)

_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)
_LEADING_ID = re.compile(r"^\s*\[?\s*(\d{1,9})\b")
_ANSWER_KEYS = ("answer", "answers", "answer_ids", "answer_id")
_EXPAND_KEYS = ("expand", "expands", "expand_ids", "expand_id")


def curation_messages(query: str, rendered: str, view: SubtreeView) -> ChatMessages:
    """The curation prompt: the rendered view plus the ids each action may use."""
    shown = ", ".join(map(str, sorted(view.visible_content_ids))) or "none"
    collapsed = ", ".join(map(str, sorted(view.collapsed_heading_ids))) or "none"
    return [
        {"role": "system", "content": CURATION_SYSTEM_PROMPT},
        {
            "role": "user",
            "content": f"Question: {query}\n\nDocument:\n{rendered}\n\n"
            f"Shown paragraph ids: {shown}\nHeadings with hidden paragraphs: {collapsed}\n\nJSON:",
        },
    ]


def _balanced_objects(text: str) -> list[str]:
    """Every top-level `{...}` span of `text` (brace depth, ignoring braces inside quotes)."""
    spans, depth, start, quote, escaped = [], 0, -1, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "\"'" and depth:
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _as_object(chunk: str) -> dict | None:
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(chunk)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_curation_json(text: str) -> dict | None:
    """The first JSON object in `text` with an answer or expand key (in code fences, inside prose,
    or Python-quoted); None when there is none."""
    text = str(text or "")
    for chunk in [*(m.group(1) for m in _FENCE.finditer(text)), text]:
        for span in _balanced_objects(chunk):
            value = _as_object(span)
            if value is not None and {str(k).lower() for k in value} & {*_ANSWER_KEYS, *_EXPAND_KEYS}:
                return value
    return None


def _ids(value: object) -> tuple[list[int], int]:
    """Integer ids from a list (or a single value) of ints / "12" / "12: words"; bad entries counted."""
    items = value if isinstance(value, list | tuple) else [] if value is None else [value]
    ids, bad = [], 0
    for item in items:
        if isinstance(item, bool):
            bad += 1
        elif isinstance(item, int):
            ids.append(item)
        elif isinstance(item, float) and item.is_integer():
            ids.append(int(item))
        elif isinstance(item, str) and (match := _LEADING_ID.match(item)):
            ids.append(int(match.group(1)))
        elif isinstance(item, dict) and isinstance(item.get("id"), int) and not isinstance(item.get("id"), bool):
            ids.append(item["id"])
        else:
            bad += 1
    return ids, bad


def parse_curation_output(text: str, doc: DocumentRouting, view: SubtreeView, *, teacher: str = "llm") -> TeacherLabel:
    """A teacher label from an LLM's curation output, every id validated against `view`."""
    found = extract_curation_json(text)
    if found is None:
        return TeacherLabel((), (), "", str(text or ""), teacher, failed=True)
    keys = {str(k).lower(): v for k, v in found.items()}
    answers, bad_answers = _ids(next((keys[k] for k in _ANSWER_KEYS if k in keys), None))
    expands, bad_expands = _ids(next((keys[k] for k in _EXPAND_KEYS if k in keys), None))
    valid_answers = [n for n in answers if n in view.visible_content_ids]
    valid_expands = [h for h in expands if h in view.collapsed_heading_ids]
    invalid = bad_answers + bad_expands + len(answers) - len(valid_answers) + len(expands) - len(valid_expands)
    if invalid and not valid_answers and not valid_expands:
        # Proposed something, all of it forbidden: not a refusal, an unusable label.
        return TeacherLabel((), (), "", str(text), teacher, failed=True, invalid_ids=invalid)
    return _label(doc, valid_answers, valid_expands, str(text), teacher, invalid)


def llm_teacher(
    engine: LLMEngine,
    tasks: Sequence[TeacherTask],
    *,
    max_new_tokens: int = 128,
    temperature: float = 0.0,
    adapter: str | None = None,
) -> list[TeacherLabel]:
    """Label every task with ONE batched engine call (the engine chunks it by its batch size)."""
    if not tasks:
        return []
    generations = engine.generate(
        [curation_messages(t.query, t.rendered, t.view) for t in tasks],
        adapter=adapter,
        max_new_tokens=max_new_tokens,
        temperature=temperature,
    )
    if len(generations) != len(tasks):
        raise RuntimeError(f"engine returned {len(generations)} generations for {len(tasks)} prompts")
    return [parse_curation_output(g.text, t.doc, t.view) for g, t in zip(generations, tasks)]


# --- similarity ---------------------------------------------------------------------------------


class TextEncoder(Protocol):
    """What the similarity teacher needs of `rag_assets.core.embedding.Embedder`."""

    def encode(self, texts: Sequence[str], *, progress: bool | None = None) -> np.ndarray: ...


HEADING_CONTEXT_WORDS = 100
DEFAULT_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))  # 0.05 .. 0.95


@dataclass(frozen=True, slots=True)
class SimilarityThresholds:
    answer: float = 0.45  # cosine (question, paragraph) to ANSWER
    expand: float = 0.40  # cosine (question, heading + its hidden text) to EXPAND
    max_answers: int = 3  # best-scoring first; the router grammar allows 8 lines
    max_expands: int = 2


@dataclass(frozen=True, slots=True)
class SimilarityScores:
    answer: dict[int, float]  # visible content node -> cosine with the question
    expand: dict[int, float]  # collapsed heading -> cosine with the question


@dataclass(frozen=True, slots=True)
class Calibration:
    thresholds: SimilarityThresholds
    labelled: int  # labelled views used
    answer_f1: float | None  # best F1 on the grid; None = nothing labelled, default kept
    expand_f1: float | None
    details: dict[str, float] = field(default_factory=dict)


def heading_text(doc: DocumentRouting, heading_id: int, words: int = HEADING_CONTEXT_WORDS) -> str:
    """A collapsed heading as the similarity teacher sees it: its text and its unseen content."""
    hidden = [doc.nodes[c].text for c, h in doc.section.items() if h == heading_id and c not in doc.seen]
    return " ".join(f"{doc.nodes[heading_id].text}: {' '.join(hidden)}".split()[:words])


def similarity_scores(encoder: TextEncoder, tasks: Sequence[TeacherTask]) -> list[SimilarityScores]:
    """Cosine of the question with every visible content node and collapsed heading; all texts of
    all tasks are embedded in one call (each distinct text once)."""
    texts: dict[str, int] = {}

    def slot(text: str) -> int:
        return texts.setdefault(text, len(texts))

    plan = []
    for t in tasks:
        q = slot(t.query)
        answers = {n: slot(t.doc.nodes[n].text) for n in sorted(t.view.visible_content_ids)}
        expands = {h: slot(heading_text(t.doc, h)) for h in sorted(t.view.collapsed_heading_ids)}
        plan.append((q, answers, expands))
    if not texts:
        return []
    vectors = np.asarray(encoder.encode(list(texts), progress=False), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    out = []
    for q, answers, expands in plan:
        out.append(
            SimilarityScores(
                {n: float(vectors[q] @ vectors[i]) for n, i in answers.items()},
                {h: float(vectors[q] @ vectors[i]) for h, i in expands.items()},
            )
        )
    return out


def pick_best(scores: dict[int, float], threshold: float, limit: int) -> list[int]:
    ranked = sorted((s, -n) for n, s in scores.items() if s >= threshold)
    return sorted(-n for _, n in ranked[::-1][:limit])


def similarity_label(doc: DocumentRouting, scores: SimilarityScores, thresholds: SimilarityThresholds) -> TeacherLabel:
    answers = pick_best(scores.answer, thresholds.answer, thresholds.max_answers)
    expands = pick_best(scores.expand, thresholds.expand, thresholds.max_expands)
    shown = sorted({**scores.answer, **scores.expand}.items(), key=lambda kv: -kv[1])[:6]
    raw = f"similarity answer>={thresholds.answer} expand>={thresholds.expand}; top: " + ", ".join(
        f"{n}={s:.3f}" for n, s in shown
    )
    return _label(doc, answers, expands, raw, "similarity")


def similarity_teacher(
    encoder: TextEncoder, tasks: Sequence[TeacherTask], thresholds: SimilarityThresholds | None = None
) -> list[TeacherLabel]:
    thresholds = thresholds or SimilarityThresholds()
    return [similarity_label(t.doc, s, thresholds) for t, s in zip(tasks, similarity_scores(encoder, tasks))]


def _micro_f1(predicted: set, gold: set) -> float:
    hit = len(predicted & gold)
    return 2 * hit / (len(predicted) + len(gold)) if hit else 0.0


def calibrate_thresholds(
    scores: Sequence[SimilarityScores],
    golds: Sequence[TeacherLabel],
    *,
    grid: Sequence[float] = DEFAULT_GRID,
    default: SimilarityThresholds | None = None,
) -> Calibration:
    """Per action kind, the grid threshold with the best micro F1 of (view, node) decisions
    against `golds` (ties: the lowest threshold); the default where no gold has that action."""
    default = default or SimilarityThresholds()
    if len(scores) != len(golds):
        raise ValueError(f"{len(scores)} scored views for {len(golds)} labels")
    best: dict[str, tuple[float, float] | None] = {}
    details: dict[str, float] = {}
    for kind, limit in (("answer", default.max_answers), ("expand", default.max_expands)):
        gold = {(i, n) for i, g in enumerate(golds) for n in (g.answer_ids if kind == "answer" else g.expand_ids)}
        if not gold:
            best[kind] = None
            continue
        found: tuple[float, float] | None = None
        for threshold in grid:
            predicted = {(i, n) for i, s in enumerate(scores) for n in pick_best(getattr(s, kind), threshold, limit)}
            f1 = _micro_f1(predicted, gold)
            details[f"{kind}_f1@{threshold:g}"] = round(f1, 4)
            if found is None or f1 > found[1]:
                found = (threshold, f1)
        best[kind] = found if found and found[1] > 0 else None
    answer, expand = best["answer"], best["expand"]
    thresholds = SimilarityThresholds(
        answer[0] if answer else default.answer,
        expand[0] if expand else default.expand,
        default.max_answers,
        default.max_expands,
    )
    return Calibration(thresholds, len(golds), answer[1] if answer else None, expand[1] if expand else None, details)
