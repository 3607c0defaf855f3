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

from rag_assets.core.routing.teachers.label import FAILED, KINDS, TeacherLabel, TeacherTask, make_label
from rag_assets.core.routing.teachers.llm import (
    CURATION_SYSTEM_PROMPT,
    curation_messages,
    extract_curation_json,
    llm_teacher,
    parse_curation_output,
)
from rag_assets.core.routing.teachers.oracle import oracle_label, oracle_teacher
from rag_assets.core.routing.teachers.similarity import (
    DEFAULT_GRID,
    HEADING_CONTEXT_WORDS,
    Calibration,
    SimilarityScores,
    SimilarityThresholds,
    TextEncoder,
    calibrate_thresholds,
    heading_text,
    pick_best,
    similarity_label,
    similarity_scores,
    similarity_teacher,
)

__all__ = [
    "CURATION_SYSTEM_PROMPT",
    "DEFAULT_GRID",
    "FAILED",
    "HEADING_CONTEXT_WORDS",
    "KINDS",
    "Calibration",
    "SimilarityScores",
    "SimilarityThresholds",
    "TeacherLabel",
    "TeacherTask",
    "TextEncoder",
    "calibrate_thresholds",
    "curation_messages",
    "extract_curation_json",
    "heading_text",
    "llm_teacher",
    "make_label",
    "oracle_label",
    "oracle_teacher",
    "parse_curation_output",
    "pick_best",
    "similarity_label",
    "similarity_scores",
    "similarity_teacher",
]
