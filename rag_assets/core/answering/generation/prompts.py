"""Every prompt and output grammar of the generation-side strategies, in one place.

ConTReGen (tree-structured query decomposition, bottom-up synthesis) and Disco-RAG (discourse
trees, rhetorical graph, planning blueprint) each turn one question into several LLM stages.
Each stage's output has a grammar: a regex for engines with constrained decoding (transformers via
xgrammar, vLLM), and a parser (`parsers.py`) that validates the output whatever the engine did.
Evidence (passages, their units, LLM summaries of them) is fenced as the reader's is: it is data,
never instructions.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.answering.reader_prompts import INJECTION_GUARD, fence_evidence, reader_style
from rag_assets.core.engines.base import ChatMessages

# ----------------------------------------------------------------------------------- ConTReGen

NOTHING_RELEVANT = "Nothing relevant."
SUBQUERY_MAX_CHARS = 80  # per generated sub-question (the grammar bounds it too)

# The one-shot example of the decomposition prompt; a small model copies it, so the parser rejects
# these sub-questions as invalid (never trusted as a decomposition of another question).
DECOMPOSE_EXAMPLE = ("How do I set up the new speaker?", "How do I charge the speaker's battery?")
DECOMPOSE_SYSTEM = (
    "You split a question into simpler sub-questions. Each sub-question asks about one facet of "
    "the question and can be answered on its own. Reply with exactly {n} sub-question(s), one per "
    "line, numbered 1., 2., ..., each ending with '?'. Never repeat the question itself. Nothing "
    "else.\nExample for 2 sub-questions:\nQuestion: How do I set up and charge the new speaker?\n"
    "Sub-questions:\n1. " + DECOMPOSE_EXAMPLE[0] + "\n2. " + DECOMPOSE_EXAMPLE[1]
)
SUMMARY_SYSTEM = (
    "You read numbered passages and say what they tell about one sub-question. Use only the "
    "passages. Reply in one or two sentences. If the passages say nothing about the sub-question, "
    f"reply exactly: {NOTHING_RELEVANT} " + INJECTION_GUARD
)
SYNTHESIS_SYSTEM = (
    "You combine the findings for several sub-questions into one finding for their parent "
    "question. Keep only what helps answer the parent question and drop the rest. Reply in one to "
    f"three sentences. If nothing helps, reply exactly: {NOTHING_RELEVANT} " + INJECTION_GUARD
)


def decompose_messages(question: str, branching: int) -> ChatMessages:
    return [
        {"role": "system", "content": DECOMPOSE_SYSTEM.format(n=branching)},
        {"role": "user", "content": f"Question: {question}\nSub-questions:"},
    ]


def decompose_regex(branching: int) -> str:
    """Exactly `branching` numbered lines, each a question (one '?', at its end)."""
    line = f"[^\\s?][^\\n?]{{4,{SUBQUERY_MAX_CHARS}}}\\?"
    return "\\n".join(f"{i}\\. {line}" for i in range(1, branching + 1))


def summary_messages(subquery: str, passages: str) -> ChatMessages:
    return [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": f"Passages:\n{fence_evidence(passages)}\n\nSub-question: {subquery}\nFinding:"},
    ]


def synthesis_messages(question: str, findings: str) -> ChatMessages:
    return [
        {"role": "system", "content": SYNTHESIS_SYSTEM},
        {"role": "user", "content": f"Findings:\n{fence_evidence(findings)}\n\nQuestion: {question}\nFinding:"},
    ]


# -------------------------------------------------------------------------------------- Disco-RAG

# Intra-chunk relations (RST-style, a small label set a small model can be asked for).
DISCOURSE_RELATIONS = (
    "elaboration",
    "contrast",
    "condition",
    "cause",
    "result",
    "sequence",
    "background",
    "example",
    "joint",
)
# Inter-chunk relations of the rhetorical graph; `unrelated` edges are dropped from it.
RHETORICAL_RELATIONS = ("support", "contradiction", "background", "elaboration", "unrelated")
BLUEPRINT_MAX_STEPS = 3
BLUEPRINT_STEP_CHARS = 80

DISCOURSE_SYSTEM = (
    "You analyse how the units of a passage are connected. For every unit from 2 on, name the "
    "earlier unit it attaches to and the relation: one of " + ", ".join(DISCOURSE_RELATIONS) + ". "
    "Reply with one line per unit, `k -> j relation`, in order. Nothing else. " + INJECTION_GUARD
)
GRAPH_SYSTEM = (
    "You compare two passages retrieved for the same question. Reply with one word: support (they "
    "agree or reinforce each other), contradiction (they conflict), background (one gives context "
    "for the other), elaboration (one adds detail to the other) or unrelated. " + INJECTION_GUARD
)
BLUEPRINT_SYSTEM = (
    "You plan an answer before it is written. You get a question and numbered passages{structure}. "
    "Reply with a plan of 1 to {steps} steps, one per line, each `- [n] what to take from passage n`, "
    "most important first. Nothing else. " + INJECTION_GUARD
)
_BLUEPRINT_STRUCTURE = (
    ", each split into units with their discourse relations, and how the passages relate to each other"
)
BLUEPRINT_READER_SYSTEM = (
    "You answer questions about documents. Use only the numbered evidence blocks you are given; if "
    "they do not contain the answer, say that you do not know. The evidence ends with a plan: "
    "follow it. " + INJECTION_GUARD
)


def discourse_messages(units: Sequence[str]) -> ChatMessages:
    listed = "\n".join(f"{i}: {text}" for i, text in enumerate(units, start=1))
    return [
        {"role": "system", "content": DISCOURSE_SYSTEM},
        {"role": "user", "content": f"Units:\n{fence_evidence(listed)}\n\nRelations:"},
    ]


def discourse_regex(units: int) -> str:
    """One line per unit k = 2..units, `k -> j relation`, j an earlier unit, in order."""
    relations = "|".join(DISCOURSE_RELATIONS)
    lines = [f"{k} -> ({'|'.join(str(j) for j in range(1, k))}) ({relations})" for k in range(2, units + 1)]
    return "\\n".join(lines)


def graph_messages(question: str, first: str, second: str) -> ChatMessages:
    body = f"Passage A:\n{first}\n\nPassage B:\n{second}"
    return [
        {"role": "system", "content": GRAPH_SYSTEM},
        {"role": "user", "content": f"Question: {question}\n\n{fence_evidence(body)}\n\nRelation of A to B:"},
    ]


GRAPH_REGEX = "(" + "|".join(RHETORICAL_RELATIONS) + ")"


def blueprint_messages(question: str, evidence: str, *, structure: bool) -> ChatMessages:
    system = BLUEPRINT_SYSTEM.format(structure=_BLUEPRINT_STRUCTURE if structure else "", steps=BLUEPRINT_MAX_STEPS)
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"Passages:\n{fence_evidence(evidence)}\n\nQuestion: {question}\nPlan:"},
    ]


def blueprint_regex(chunks: int) -> str:
    """1..BLUEPRINT_MAX_STEPS lines `- [n] text`, n a passage number (no brackets in the text)."""
    numbers = "|".join(str(n) for n in range(1, chunks + 1))
    step = f"- \\[({numbers})\\] [^\\s\\[\\]][^\\n\\[\\]]{{2,{BLUEPRINT_STEP_CHARS}}}"
    return f"({step}\\n){{0,{BLUEPRINT_MAX_STEPS - 1}}}{step}\\n?"


def blueprint_reader_messages(question: str, evidence: str, style: str) -> ChatMessages:
    """The Disco-RAG reader: `evidence` ends with the plan (exactly what the reader sees)."""
    chosen = reader_style(style)
    return [
        {"role": "system", "content": BLUEPRINT_READER_SYSTEM + chosen.instruction},
        {"role": "user", "content": f"Evidence:\n{fence_evidence(evidence)}\n\nQuestion: {question}\nAnswer:"},
    ]
