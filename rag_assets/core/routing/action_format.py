"""Router input and output: the routing prompt, the action grammar, and a parser that trusts
nothing it cannot check against the rendered subtree.

Grammar, one action per line:
    [ANSWER] id: first words      select a visible content node
    [EXPAND] id: heading          unfold a heading whose content was never shown
    Cannot answer                 refuse the document
An invalid action line is *expelled* (counted, ignored); an output with no usable line and no
refusal is *collapsed*. A refusal mixed with valid actions keeps the actions (`refused` stays
True so the metrics can see the contradiction).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag_assets.core.routing.subtree import SubtreeView

REFUSAL = "Cannot answer"
FIRST_WORDS = 5
MAX_ACTIONS = 3  # lines a constrained router output may hold (3 x ~14 tokens: the default 48-token budget)
# Any well-formed output; `view_action_regex` is the tight per-view grammar the routing loop uses.
ACTION_REGEX = r"((\[ANSWER\]|\[EXPAND\]) [0-9]{1,6}: [^\n]{0,80}\n){1,8}|Cannot answer\n?"
_REGEX_SPECIAL = frozenset("\\.^$|?*+()[]{}/")

ROUTER_SYSTEM_PROMPT = (
    "You route a question through one document. You see the document's outline: one line per "
    "node, `id: text`, indented by depth. Headings are always shown; only some paragraphs are.\n"
    "Reply with one action per line and nothing else:\n"
    "[ANSWER] id: first words   - a shown paragraph that helps answer the question\n"
    "[EXPAND] id: heading       - a heading whose hidden paragraphs may answer it\n"
    "Cannot answer              - if this document cannot answer the question"
)
_NO_EXPAND = "\nDo not use [EXPAND]."
_NO_REFUSE = "\nDo not refuse: choose the most relevant lines."

_ACTION = re.compile(r"^\s*(?:[-*•]|\d+[.)])?\s*\[(answer|expand)\]\s*(\d+)\s*(?:[:\-]\s*(.*))?$", re.IGNORECASE)
_REFUSE = re.compile(r"^\W*cannot answer\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RouterDecision:
    answer_ids: tuple[int, ...] = ()
    expand_ids: tuple[int, ...] = ()
    refused: bool = False
    expelled: int = 0
    collapsed: bool = False
    lines: tuple[str, ...] = field(default=(), compare=False)


def routing_messages(
    question: str, rendered: str, *, allow_expand: bool = True, allow_refuse: bool = True
) -> list[dict[str, str]]:
    system = ROUTER_SYSTEM_PROMPT + ("" if allow_expand else _NO_EXPAND) + ("" if allow_refuse else _NO_REFUSE)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Question: {question}\n\nDocument:\n{rendered}\n\nActions:"},
    ]


def first_words(text: str, count: int = FIRST_WORDS) -> str:
    return " ".join(text.replace("\n", " ").split()[:count])


def format_actions(answers: list[tuple[int, str]], expands: list[tuple[int, str]]) -> str:
    """The target text for training: exactly the grammar `parse_router_output` accepts."""
    lines = [f"[ANSWER] {i}: {first_words(t)}" for i, t in answers]
    lines += [f"[EXPAND] {i}: {first_words(t)}" for i, t in expands]
    return "\n".join(lines) if lines else REFUSAL


def _regex_literal(text: str) -> str:
    # Escapes only what is special in the regex dialects engines accept (xgrammar, outlines):
    # `re.escape` also escapes spaces and hyphens, which some of them reject.
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def view_action_regex(view: SubtreeView, *, allow_expand: bool = True, allow_refuse: bool = True) -> str:
    """The grammar of every output `parse_router_output` accepts in full for `view`: `[ANSWER]`
    only on its visible content nodes, `[EXPAND]` only on its collapsed headings, each followed by
    the node's exact first words, at most MAX_ACTIONS lines; or the refusal. Constrained decoding
    with it leaves the router nothing to choose but the actions themselves (a small model cannot
    drift into prose or name an id it was not shown). An action-less view allows only refusal."""

    def choices(ids: frozenset[int]) -> str:
        return "|".join(f"{i}: {_regex_literal(first_words(view.nodes[i].text))}" for i in sorted(ids))

    kinds = []
    if view.visible_content_ids:
        kinds.append(f"\\[ANSWER\\] ({choices(view.visible_content_ids)})")
    if allow_expand and view.collapsed_heading_ids:
        kinds.append(f"\\[EXPAND\\] ({choices(view.collapsed_heading_ids)})")
    action = f"({'|'.join(kinds)})"
    # The last line's newline is optional: training targets end without one.
    alternatives = [f"({action}\\n){{0,{MAX_ACTIONS - 1}}}{action}\\n?"] if kinds else []
    if allow_refuse or not kinds:
        alternatives.append(_regex_literal(REFUSAL))
    return "|".join(alternatives)


def _normal(text: str) -> str:
    return " ".join(text.replace("⏎", " ").casefold().split()).rstrip(" .…")


def _words_match(given: str | None, node_text: str) -> bool:
    if not given or not given.strip():
        return True  # an id alone is accepted; only words that are given must match
    want, have = _normal(given), _normal(node_text)
    return bool(want) and (have.startswith(want) or want.startswith(have))


def parse_router_output(text: str, view: SubtreeView) -> RouterDecision:
    """Validate every line against `view`; never raises, never returns an id `view` forbids."""
    answers: list[int] = []
    expands: list[int] = []
    refused = False
    expelled = 0
    lines = tuple(line for line in str(text or "").splitlines() if line.strip())
    for line in lines:
        if _REFUSE.match(line):
            refused = True
            continue
        match = _ACTION.match(line)
        if not match:
            continue  # prose around the actions is ignored, not counted as an action
        kind, raw_id, words = match.group(1).lower(), match.group(2), match.group(3)
        node_id = int(raw_id) if len(raw_id) <= 9 else -1
        node = view.nodes[node_id] if 0 <= node_id < len(view.nodes) else None
        if kind == "answer":
            valid = node is not None and node_id in view.visible_content_ids and _words_match(words, node.text)
            target = answers
        else:
            valid = node is not None and node_id in view.collapsed_heading_ids and _words_match(words, node.text)
            target = expands
        if not valid:
            expelled += 1
        elif node_id not in target:
            target.append(node_id)
    collapsed = not answers and not expands and not refused
    return RouterDecision(tuple(answers), tuple(expands), refused, expelled, collapsed, lines)
