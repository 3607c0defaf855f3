"""Whether a model trained on the passage index (the passage reranker, the namespace router) must be
trained again: only when what it learned from changed beyond a threshold since it was trained.

What a model learned from is summarised as a `TrainingData`: one fingerprint per document (of its
passages' content hashes), one per training question, and a digest of the training settings. The
fingerprint is stored with the published model (`published_models.details["training_data"]`);
the next materialization compares the current one with it (`retrain_decision`) and says why it
trains again or keeps the published model, in words the run's metadata shows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rag_assets.core.corpus.document_changes import passage_document_hashes
from rag_assets.core.corpus.question_sets import Question


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TrainingData:
    """What a model was (or would be) trained on: document fingerprints, question fingerprints,
    and a digest of the settings."""

    documents: Mapping[str, str]  # doc_id -> fingerprint of its passages
    questions: frozenset[str]  # a fingerprint per training question
    settings: str

    def to_json(self) -> dict[str, Any]:
        return {"documents": dict(self.documents), "questions": sorted(self.questions), "settings": self.settings}

    @classmethod
    def from_json(cls, value: Mapping[str, Any] | None) -> TrainingData | None:
        if not value or "documents" not in value:
            return None
        return cls(dict(value["documents"]), frozenset(value.get("questions", ())), str(value.get("settings", "")))


def question_key(question: Question) -> str:
    """What identifies a training question: its id, text and gold."""
    return json.dumps(
        [question.qid, question.query, list(question.answers), list(question.evidences), list(question.section_path)]
    )


def training_data(
    passage_pairs: Iterable[tuple[str, str]], questions: Iterable[str], settings: Mapping[str, Any]
) -> TrainingData:
    """The fingerprint of (passage id, content hash) pairs (grouped by document: the passage id's
    part before `#`), of training questions (`question_key`, or the text of a pseudo-query), and of
    the settings."""
    documents = passage_document_hashes(passage_pairs)
    prints = frozenset(_short_hash(q) for q in questions)
    return TrainingData(documents, prints, _short_hash(json.dumps(dict(settings), sort_keys=True, default=str)))


@dataclass(frozen=True)
class RetrainDecision:
    retrain: bool
    reason: str
    documents_changed: int = 0
    questions_changed: int = 0

    def metadata(self) -> dict[str, object]:
        return {
            "retrained": self.retrain,
            "retrain_reason": self.reason,
            "training_documents_changed": self.documents_changed,
            "training_questions_changed": self.questions_changed,
        }


def _changed(old: Mapping[str, str], new: Mapping[str, str]) -> int:
    return len(set(old) ^ set(new)) + sum(1 for k in set(old) & set(new) if old[k] != new[k])


def retrain_decision(
    previous: TrainingData | None,
    current: TrainingData,
    threshold: float,
    *,
    model: str | None,
    always: bool = False,
) -> RetrainDecision:
    """Train again when asked to (`always`), when no model `model` was trained before, when the
    settings changed, or when the share of documents (or of questions) added, changed or deleted
    since is above `threshold` (0 = any change); else keep `model`."""
    if always:
        return RetrainDecision(True, "retraining on every materialization (always_retrain)")
    if model is None or previous is None:
        return RetrainDecision(True, "no model trained before from this data")
    if previous.settings != current.settings:
        return RetrainDecision(True, f"the training settings changed since {model} was trained")
    docs = _changed(previous.documents, current.documents)
    doc_total = max(len(set(previous.documents) | set(current.documents)), 1)
    questions = len(previous.questions ^ current.questions)
    question_total = max(len(previous.questions | current.questions), 1)
    share = max(docs / doc_total, questions / question_total)
    changes = (
        f"{docs} of {doc_total} documents ({docs / doc_total:.1%}) and {questions} of {question_total} training "
        f"questions ({questions / question_total:.1%}) added, changed or deleted since {model} was trained"
    )
    if share > threshold:
        return RetrainDecision(True, f"{changes}: above the {threshold:.0%} threshold", docs, questions)
    return RetrainDecision(False, f"{changes}: within the {threshold:.0%} threshold; kept {model}", docs, questions)
