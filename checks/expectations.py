"""Great Expectations 1.x suites, validated on DataFrames inside Dagster asset checks.

An ephemeral GX context is enough: the suites live in code (reviewed with it) and the results
travel as check metadata, so nothing is written to a GX project folder.
"""

import os
from dataclasses import dataclass
from functools import cache

import pandas as pd

# Not a project setting (those are read in rag_assets.core.settings): Great Expectations reads it
# when imported, so it is set here, just before the import below (setdefault: a user's value wins).
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

import great_expectations as gx
from great_expectations.data_context.types.base import ProgressBarsConfig


@dataclass(frozen=True, slots=True)
class SuiteOutcome:
    success: bool
    evaluated: int
    failed: list[str]
    markdown: str


@cache
def _context() -> gx.data_context.AbstractDataContext:
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    context.data_sources.add_pandas("catalogue")
    return context


def _batch_definition(name: str):
    source = _context().data_sources.get("catalogue")
    try:
        asset = source.get_asset(name)
    except LookupError:
        asset = source.add_dataframe_asset(name)
    try:
        return asset.get_batch_definition("whole")
    except (KeyError, LookupError, ValueError):
        return asset.add_batch_definition_whole_dataframe("whole")


def validate_frame(name: str, frame: pd.DataFrame, expectations: list) -> SuiteOutcome:
    """Run `expectations` on `frame`; the Markdown table lists each expectation's verdict."""
    suite = gx.ExpectationSuite(name=f"{name}_suite", expectations=expectations)
    result = _batch_definition(name).get_batch(batch_parameters={"dataframe": frame}).validate(suite)
    rows, failed = ["| expectation | column(s) | ok | unexpected |", "|---|---|---|---|"], []
    for r in result.results:
        cfg = r.expectation_config
        cols = cfg.kwargs.get("column") or ", ".join(cfg.kwargs.get("column_list", []))
        unexpected = r.result.get("unexpected_count", 0) if r.result else 0
        rows.append(f"| {cfg.type} | {cols} | {'yes' if r.success else '**no**'} | {unexpected} |")
        if not r.success:
            failed.append(
                f"{cfg.type}({cols}): {unexpected} unexpected, e.g. {r.result.get('partial_unexpected_list', [])[:3]}"
            )
    return SuiteOutcome(bool(result.success), len(result.results), failed, "\n".join(rows))


E = gx.expectations


def source_document_expectations(formats: list[str]) -> list:
    return [
        E.ExpectColumnValuesToNotBeNull(column="doc_id"),
        E.ExpectColumnValuesToBeUnique(column="doc_id"),
        E.ExpectColumnValuesToNotBeNull(column="content_hash"),
        E.ExpectColumnValueLengthsToEqual(column="content_hash", value=64),
        E.ExpectColumnValuesToBeInSet(column="format", value_set=formats),
        E.ExpectColumnValuesToBeBetween(column="size_bytes", min_value=1),
    ]


def tree_node_expectations() -> list:
    return [
        E.ExpectColumnValuesToNotBeNull(column="doc_id"),
        E.ExpectColumnValuesToNotBeNull(column="node_id"),
        E.ExpectCompoundColumnsToBeUnique(column_list=["doc_id", "node_id"]),
        E.ExpectColumnValuesToBeInSet(column="kind", value_set=["structure", "content"]),
        E.ExpectColumnValuesToBeInSet(
            column="block", value_set=["title", "heading", "paragraph", "list_item", "table_row", "code"]
        ),
        E.ExpectColumnValuesToBeBetween(column="depth", min_value=0),
    ]
