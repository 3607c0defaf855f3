"""Curation: label stored routing samples with the configured teacher (`oracle`, `llm`,
`similarity`, or `mix`: the oracle for questions with gold labels, the similarity teacher for the
others)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag_assets.core.corpus.question_sets import Question
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import LLMEngine
from rag_assets.core.routing.samples import RoutingSample, restore
from rag_assets.core.routing.teachers import (
    Calibration,
    SimilarityThresholds,
    TeacherLabel,
    TeacherTask,
    TextEncoder,
    calibrate_thresholds,
    llm_teacher,
    similarity_label,
    similarity_scores,
)
from rag_assets.core.routing.teachers.oracle import oracle_label

TEACHERS = ("oracle", "llm", "similarity", "mix")


def has_gold(question: Question) -> bool:
    """The oracle can label this question: gold answers, evidence or a section path, or it is
    known to be unanswerable (then refusing every document is the right label)."""
    return bool(question.answers or question.evidences or question.section_path or question.not_answerable)


@dataclass(slots=True)
class Curation:
    labels: list[TeacherLabel]  # aligned with the samples
    calibration: Calibration | None = None  # the similarity thresholds used, when that teacher ran


def curate(  # noqa: C901 — one short branch per teacher kind, read side by side
    samples: Sequence[RoutingSample],
    questions: dict[str, Question],
    trees: dict[str, Sequence[TreeNode]],
    teacher: str,
    *,
    encoder: TextEncoder | None = None,
    engine: LLMEngine | None = None,
    thresholds: SimilarityThresholds | None = None,
    calibrate_on: set[str] | frozenset[str] = frozenset(),
    llm_max_new_tokens: int = 128,
) -> Curation:
    """Label every sample with `teacher`.

    oracle: gold answers / evidence / section path. llm: `engine`, one batched call for all
    samples. similarity: `encoder`, with `thresholds` if given, else thresholds calibrated against
    the oracle labels of the samples in `calibrate_on` whose question has gold (the defaults when
    none has). mix: the oracle where the question has gold (`has_gold`), else similarity.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"teacher {teacher!r} is not one of {TEACHERS}")
    missing = sorted({s.doc_id for s in samples} - trees.keys())
    if missing:
        raise KeyError(f"no tree for documents {missing[:5]} (routing_subtrees is newer than document_trees?)")
    unknown = sorted({s.qid for s in samples} - questions.keys())
    if unknown:
        raise KeyError(f"no question for qids {unknown[:5]} (routing_subtrees is newer than questions?)")
    tasks = []
    for sample in samples:
        doc, view = restore(sample, trees[sample.doc_id])
        tasks.append(TeacherTask(sample.query, doc, view, sample.rendered))

    def oracle(i: int) -> TeacherLabel:
        return oracle_label(tasks[i].doc, tasks[i].view, questions[samples[i].qid])

    if teacher == "oracle":
        return Curation([oracle(i) for i in range(len(tasks))])
    if teacher == "llm":
        if engine is None:
            raise ValueError("the llm teacher needs an engine")
        return Curation(llm_teacher(engine, tasks, max_new_tokens=llm_max_new_tokens))
    if encoder is None:
        raise ValueError(f"the {teacher} teacher needs an encoder (the embedder)")
    use_similarity = [teacher == "similarity" or not has_gold(questions[s.qid]) for s in samples]
    labels: list[TeacherLabel | None] = [None if sim else oracle(i) for i, sim in enumerate(use_similarity)]
    wanted = [i for i, sim in enumerate(use_similarity) if sim]
    calibration = None
    if wanted:
        labelled = (
            []
            if thresholds is not None
            else [i for i, s in enumerate(samples) if s.subtree_id in calibrate_on and has_gold(questions[s.qid])]
        )
        scoring = sorted({*wanted, *labelled})  # each view embedded once, for calibration and labelling
        scores = dict(zip(scoring, similarity_scores(encoder, [tasks[i] for i in scoring])))
        if thresholds is None:
            calibration = calibrate_thresholds(
                [scores[i] for i in labelled], [labels[i] or oracle(i) for i in labelled]
            )
        else:
            calibration = Calibration(thresholds, 0, None, None)
        for i in wanted:
            labels[i] = similarity_label(tasks[i].doc, scores[i], calibration.thresholds)
    return Curation([label for label in labels if label is not None], calibration)
