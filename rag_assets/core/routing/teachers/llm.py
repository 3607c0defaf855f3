"""The LLM teacher (the paper's curation): any `LLMEngine` is asked, in ONE batched `generate`
call, which shown paragraphs answer the question and which collapsed headings to unfold, as JSON
(`{"answer": [ids], "expand": [ids]}`, both empty = refuse). The JSON is found tolerantly (code
fences, prose around it, Python-style quotes); every id is validated against the view (ANSWER
only on visible content, EXPAND only on collapsed headings) and invalid ids are dropped and
counted. An output with no usable JSON, or whose ids were ALL invalid, is `failed`: it is kept
for audit but excluded from training (a refusal would teach the router to refuse a document the
teacher meant to answer from)."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence

from rag_assets.core.engines.base import ChatMessages, LLMEngine
from rag_assets.core.routing.subtree import DocumentRouting, SubtreeView
from rag_assets.core.routing.teachers.label import TeacherLabel, TeacherTask, make_label

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


def _balanced_objects(text: str) -> list[str]:  # noqa: C901 — a character scanner: its states read best in one loop
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
    return make_label(doc, valid_answers, valid_expands, str(text), teacher, invalid)


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
