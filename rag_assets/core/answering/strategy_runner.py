"""Running a strategy: its evidence gathered (core/answering/strategies.py), then read, or
extracted, for all questions at once.

Every strategy ends with ONE reader call for all questions (`extractive` answers make none: the
best sentence of the evidence is the answer, core/answering/extractive.py, with the reader's yes or
no scored before it where the question asks for one, core/answering/verdict.py). Where the collection
publishes a relevance floor (core/answering/no_answer.py), the evidence-reading kinds (`rag`,
`rdr2`, `dota`) hold each question's evidence to it before reading: a question none of whose
evidence is close enough is answered "not found" and never sent to the reader, so nothing is
streamed that the stored answer would take back. So is a question too few of whose words occur in
the documents searched (core/answering/known_terms.py), with a note naming the unknown words. `seconds` per answer is the batch's wall time,
plus the seconds of any generation a caching engine replayed, divided by its number of questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.core.answering.answer_ending import complete_answer
from rag_assets.core.answering.attribution import attribute_outcome
from rag_assets.core.answering.echo import settle_outcome
from rag_assets.core.answering.extractive import answered_when_empty, extract_answer
from rag_assets.core.answering.figure_answers import FIGURE, ROUTED_FOR_FIGURES, figure_answer
from rag_assets.core.answering.generation.contregen import run_contregen
from rag_assets.core.answering.generation.disco import run_disco
from rag_assets.core.answering.known_terms import TermShare, term_refusals
from rag_assets.core.answering.measure_verdicts import measure_verdict
from rag_assets.core.answering.no_answer import below_floor, evidence_relevance, not_found
from rag_assets.core.answering.reader_prompts import reader_messages, reader_style
from rag_assets.core.answering.strategies import GatheredEvidence, gather_evidence
from rag_assets.core.answering.types import (
    EXTRACTIVE_KINDS,
    KINDS,
    AnswerOutcome,
    RetrievalExtras,
    Retrieve,
    StrategyInputs,
    StrategyRunner,
    StrategySpec,
)
from rag_assets.core.answering.verdict import asks_yes_no, with_verdict, yes_no_verdicts
from rag_assets.core.corpus.tree import TreeNode
from rag_assets.core.engines.base import BatchClock, Generation, LLMEngine
from rag_assets.core.routing.navigation import Router

NO_GENERATION = Generation("", 0, 0)


def run_strategy(
    questions: Sequence[str],
    spec: StrategySpec,
    *,
    retrieve: Retrieve,
    trees: Mapping[str, Sequence[TreeNode]],
    engine: LLMEngine,
    reader: LLMEngine | None = None,
    routers: Mapping[str, Router] | None = None,
    evidence_budgets: Sequence[int | None] | None = None,
    extras: RetrievalExtras | None = None,
) -> list[AnswerOutcome]:
    """The spec's strategy for all questions (each kind's runner in `STRATEGY_RUNNERS`)."""
    questions = list(questions)
    if not questions:
        return []
    inputs = StrategyInputs(retrieve, trees, engine, reader or engine, routers, evidence_budgets, extras)
    if spec.answer_form == "extractive":
        return extract_gathered_evidence(questions, spec, inputs)
    scorer = extras.answer_scorer if extras else None
    outcomes = [
        o if o.not_found else attribute_outcome(settle_outcome(o), scorer)
        for o in STRATEGY_RUNNERS[spec.kind](questions, spec, inputs)
    ]
    if spec.kind not in EXTRACTIVE_KINDS:  # contregen / disco synthesise; `none` has no evidence
        return outcomes
    return [answered_when_empty(o, scorer, short=spec.answer_style == "short") for o in outcomes]


def _gathered(questions: list[str], spec: StrategySpec, inputs: StrategyInputs) -> list[GatheredEvidence]:
    return gather_evidence(
        questions,
        spec,
        retrieve=inputs.retrieve,
        trees=inputs.trees,
        engine=inputs.engine,
        routers=inputs.routers,
        evidence_budgets=inputs.evidence_budgets,
        extras=inputs.extras,
    )


def relevances(
    questions: list[str], gathered: list[GatheredEvidence], spec: StrategySpec, extras: RetrievalExtras | None
) -> list[float | None] | None:
    """Each question's evidence relevance where `spec`'s answers are held to a relevance floor
    (None: they are not: no floor published, no scorer, or a kind that reads no gathered evidence)."""
    if spec.kind not in EXTRACTIVE_KINDS or extras is None or extras.relevance_floor is None:
        return None
    scorer = extras.relevance_scorer
    if scorer is None:
        return None
    return [evidence_relevance(q, g.citations, scorer) for q, g in zip(questions, gathered)]


def _answered(relevance: list[float | None] | None, floor: float | None, i: int) -> bool:
    return relevance is None or floor is None or not below_floor(relevance[i], floor)


def unknown_terms(questions: list[str], spec: StrategySpec, extras: RetrievalExtras | None) -> list[TermShare | None]:
    """Per question, its terms where too few occur in the documents for `spec`'s answer to be read
    (None: read it; always None for kinds that read no gathered evidence or without a lookup)."""
    lookup = extras.term_lookup if extras is not None and spec.kind in EXTRACTIVE_KINDS else None
    return term_refusals(questions, lookup)


def _refused(
    outcome: AnswerOutcome, relevance: list[float | None] | None, terms: TermShare | None, i: int
) -> AnswerOutcome:
    return not_found(outcome, relevance[i] if relevance else None, terms.note() if terms is not None else "")


def extract_gathered_evidence(questions: list[str], spec: StrategySpec, inputs: StrategyInputs) -> list[AnswerOutcome]:
    """The extractive form of `rag`, `rdr2`, `dota`: their evidence gathered for all questions, then
    each answer is the sentence of it the scorer ranks best (no reader call)."""
    extras = inputs.extras or RetrievalExtras()
    scorer = extras.answer_scorer
    if scorer is None:
        raise ValueError(f"strategy {spec.name!r} answers extractively but no answer scorer was provided")
    clock = BatchClock(inputs.engine, inputs.reader)
    gathered = _gathered(questions, spec, inputs)
    relevance = relevances(questions, gathered, spec, extras)
    unknown = unknown_terms(questions, spec, extras)
    outcomes = []
    for i, (question, g) in enumerate(zip(questions, gathered)):
        outcome = gathered_outcome(question, g, "", 0.0, NO_GENERATION, reader_calls=0)
        outcome.answer_form = "extractive"
        # a figure asked for: computed from the cells of the evidence, else of the routed documents' tables.
        # Every cell it rests on is cited and named by the question, so the floor (which judges whether
        # the evidence's best passage answers) does not refuse it; the term rule still does.
        figure, verdict = None, ""
        if unknown[i] is None and spec.figures:
            routed = g.retrieved_doc_ids[:ROUTED_FOR_FIGURES]
            figure = figure_answer(question, g.citations, inputs.trees, routed)
            # a yes/no over a measure's direction or sign: the verdict computed from cells, not the reader's
            measured = None if figure else measure_verdict(question, g.citations, inputs.trees, routed)
            if measured is not None:
                figure, verdict = measured
        if figure is None and (unknown[i] is not None or not _answered(relevance, extras.relevance_floor, i)):
            outcomes.append(_refused(outcome, relevance, unknown[i], i))
            continue
        answer = figure or extract_answer(question, g.citations, scorer, short=spec.answer_style == "short")
        outcome.answer, outcome.citations = answer.answer, answer.citations
        outcome.supporting, outcome.attribution = answer.supporting, FIGURE if figure else answer.method
        outcome.relevance = relevance[i] if relevance else None
        outcome.verdict = verdict
        outcomes.append(outcome)
    _give_verdicts(outcomes, spec, inputs.reader)
    seconds = clock.seconds_per_question(len(questions))  # the sentences' scoring included
    for outcome in outcomes:
        outcome.seconds = seconds
    return outcomes


def _give_verdicts(outcomes: list[AnswerOutcome], spec: StrategySpec, reader: LLMEngine) -> None:
    """The reader's yes or no before the quotes that answer a yes/no question (core/answering/verdict.py)."""
    asked = [o for o in outcomes if not o.not_found and o.answer and not o.verdict and asks_yes_no(o.question)]
    verdicts = yes_no_verdicts(reader, [o.question for o in asked], [o.evidence for o in asked], spec.answer_style)
    for outcome, verdict in zip(asked, verdicts):
        outcome.answer = with_verdict(verdict, outcome.answer)
        outcome.verdict = verdict or ""
        outcome.engine_calls += verdict is not None  # the reader scored the verdict


def gathered_outcome(
    question: str, g: GatheredEvidence, answer: str, seconds: float, generation: Generation, *, reader_calls: int = 1
) -> AnswerOutcome:
    """The outcome of one question's gathered evidence and its answer (read or extracted)."""
    return AnswerOutcome(
        question=question,
        answer=answer,
        evidence=g.evidence,
        evidence_words=g.words,
        citations=g.citations,
        passage_ids=g.passage_ids,
        retrieved_doc_ids=g.retrieved_doc_ids,
        router_prompt_tokens=g.router_prompt_tokens,
        router_output_tokens=g.router_output_tokens,
        reader_prompt_tokens=generation.prompt_tokens,
        reader_output_tokens=generation.output_tokens,
        engine_calls=g.routing_rounds + reader_calls,
        seconds=seconds,
        expelled=g.expelled,
        refused_docs=g.refused_docs,
        retrieval=g.retrieval,
    )


def read_gathered_evidence(questions: list[str], spec: StrategySpec, inputs: StrategyInputs) -> list[AnswerOutcome]:
    """`none`, `rag`, `rdr2`, `dota`: `gather_evidence` for all questions, then ONE reader call for
    all whose evidence reaches the relevance floor and whose words the documents know (the others:
    not found, unread)."""
    clock = BatchClock(inputs.engine, inputs.reader)
    gathered = _gathered(questions, spec, inputs)
    relevance = relevances(questions, gathered, spec, inputs.extras)
    floor = inputs.extras.relevance_floor if inputs.extras else None
    unknown = unknown_terms(questions, spec, inputs.extras)
    read = [i for i in range(len(questions)) if unknown[i] is None and _answered(relevance, floor, i)]
    style = reader_style(spec.answer_style)
    max_new_tokens = spec.reader_max_new_tokens or style.max_new_tokens
    batch = [reader_messages(questions[i], gathered[i].evidence, style.name) for i in read]
    generations = dict(zip(read, inputs.reader.generate(batch, max_new_tokens=max_new_tokens) if batch else []))
    seconds = clock.seconds_per_question(len(questions))
    outcomes = []
    for i, (question, g) in enumerate(zip(questions, gathered)):
        if i not in generations:
            unread = gathered_outcome(question, g, "", seconds, NO_GENERATION, reader_calls=0)
            outcomes.append(_refused(unread, relevance, unknown[i], i))
            continue
        generation = generations[i]
        text = complete_answer(generation.text, generation.output_tokens, max_new_tokens)
        outcome = gathered_outcome(question, g, text, seconds, generation)
        outcome.relevance = relevance[i] if relevance else None
        outcomes.append(outcome)
    return outcomes


def _contregen(questions: list[str], spec: StrategySpec, inputs: StrategyInputs) -> list[AnswerOutcome]:
    return run_contregen(
        questions, spec, retrieve=inputs.retrieve, trees=inputs.trees, engine=inputs.engine, reader=inputs.reader
    )


def _disco(questions: list[str], spec: StrategySpec, inputs: StrategyInputs) -> list[AnswerOutcome]:
    return run_disco(
        questions, spec, retrieve=inputs.retrieve, trees=inputs.trees, engine=inputs.engine, reader=inputs.reader
    )


# The one place a strategy kind is dispatched: kind -> its runner (every kind in KINDS).
STRATEGY_RUNNERS: dict[str, StrategyRunner] = {
    "none": read_gathered_evidence,
    "rag": read_gathered_evidence,
    "rdr2": read_gathered_evidence,
    "dota": read_gathered_evidence,
    "contregen": _contregen,
    "disco": _disco,
}
assert tuple(STRATEGY_RUNNERS) == KINDS, "every strategy kind needs exactly one runner"
