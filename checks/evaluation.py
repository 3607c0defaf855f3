"""Checks guarding the evaluation: `answer_policy` following its rule, `evaluation_report`'s summary complete and finite,
`evidence_evaluation`'s rows covering every question within retrieve-and-read's words, and no
stored evaluation answer echoing its prompt."""

import json

import dagster as dg
from dagster_duckdb import DuckDBResource

from checks.partition import checked_partition
from rag_assets.core.answering.echo import find_echoes
from rag_assets.core.answering.policy.catalogue import BUDGET_SOURCE
from rag_assets.core.answering.policy.default_form import policy_problems
from rag_assets.core.answering.policy.routing_choice import routing_problems
from rag_assets.core.answering.published import published_form_choice, published_routing_choice
from rag_assets.core.evaluation.evidence import evidence_problems
from rag_assets.core.evaluation.report import non_finite_numbers
from rag_assets.core.lineage import load_answers
from rag_assets.core.settings import latest_summary_path
from rag_assets.core.store.evidence import load_evidence
from rag_assets.defs.metadata import markdown_table


def _problems_table(problems: list[str]) -> dg.MetadataValue:
    return dg.MetadataValue.md(markdown_table(["problem"], [(p,) for p in problems[:30]]) if problems else "none")


@dg.asset_check(
    asset="evaluation_report",
    description="Fails (ERROR) when the collection's latest summary.json misses a number or holds "
    "NaN/infinity in its results, scaling or router sections.",
)
def evaluation_summary_is_complete(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    problems: list[str] = []
    path = latest_summary_path(collection) if collection else None
    if path is None:
        problems.append("evaluation_report was never materialized")
    elif not path.is_file():
        problems.append(f"{path} does not exist")
    else:
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            problems.append(f"{path} is not valid JSON: {err}")
        else:
            problems += non_finite_numbers(summary)
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "collection": collection or "-",
            "summary": str(path) if path else "-",
            "problems": len(problems),
            "details": _problems_table(problems),
        },
    )


@dg.asset_check(
    asset="evidence_evaluation",
    description=f"Fails (ERROR) when the collection's evidence rows lack {BUDGET_SOURCE}, a strategy misses "
    f"questions {BUDGET_SOURCE} has, a routed row gives a question more words than {BUDGET_SOURCE} did (the "
    "budget cap broken), or a metric lies outside [0, 1].",
)
def evidence_covers_every_question(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    rows = []
    if collection:
        with catalogue.get_connection() as con:
            rows = load_evidence(con, collection)
    # no rows: the collection has no evaluation questions (the asset says so), nothing to distrust
    problems = evidence_problems(rows, BUDGET_SOURCE) if rows else []
    if not collection:
        problems = ["evidence_evaluation was never materialized"]
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "collection": collection or "-",
            "rows": len(rows),
            "questions": len({r.qid for r in rows}),
            "problems": len(problems),
            "details": _problems_table(problems),
        },
    )


@dg.asset_check(
    asset="answers",
    description="Fails (ERROR) when a stored evaluation answer of the collection holds echoed prompt "
    "text: the evidence delimiters, a numbered block's header, a Question:/Evidence: label, the "
    "documents' inline HTML or five words in a row of the reader's instructions.",
)
def answers_echo_no_prompt(context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    records = []
    if collection:
        with catalogue.get_connection() as con:
            records = load_answers(con, collection, source="evaluation")
    echoes = [(r, find_echoes(r.answer)) for r in records]
    echoing = [(r, found) for r, found in echoes if found]
    rows = [(r.strategy, r.qid, found[0].kind, found[0].text[:60]) for r, found in echoing[:30]]
    return dg.AssetCheckResult(
        passed=bool(collection) and not echoing,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "collection": collection or "-",
            "answers": len(records),
            "echoing": len(echoing),
            "cut_at_answer_time": sum(1 for r in records if r.echo),
            "details": dg.MetadataValue.md(
                markdown_table(["strategy", "qid", "echo", "text"], rows) if rows else "none"
            ),
        },
    )


@dg.asset_check(
    asset="answer_policy",
    blocking=True,
    description="Fails (ERROR) when the collection has no published answer policy, its right-answer counts lie "
    "outside the questions measured, the reader's answer is the default without being right more often beyond "
    "noise (the rule of core/answering/policy/default_form.py), or rdr2's published routing settings are not a "
    "measured candidate or replace the defaults without the rule's evidence (routing_choice.py): `answers` and "
    "every ask would use them.",
)
def answer_policy_follows_its_rule(
    context: dg.AssetCheckExecutionContext, catalogue: DuckDBResource
) -> dg.AssetCheckResult:
    collection = checked_partition(context)
    choice = routing = None
    if collection:
        with catalogue.get_connection() as con:
            choice = published_form_choice(con, collection)
            routing = published_routing_choice(con, collection)
    problems = (
        policy_problems(choice) + routing_problems(routing) if collection else ["answer_policy was never materialized"]
    )
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "collection": collection or "-",
            "default_form": choice.form if choice else "-",
            "why": choice.reason if choice else "-",
            "routing": f"{routing.setting.label} ({routing.reason})" if routing else "-",
            "problems": len(problems),
            "details": _problems_table(problems),
        },
    )
