"""Every column of every catalogue table the UI shows has a description, and no description names
a column the table does not have."""

from __future__ import annotations

from rag_assets.core.store.schemas import SCHEMA, table_columns
from rag_assets.defs.column_descriptions import COLUMN_DESCRIPTIONS
from rag_assets.defs.metadata import table_metadata


def test_every_catalogue_column_is_described_and_nothing_else() -> None:
    assert set(COLUMN_DESCRIPTIONS) == set(SCHEMA)
    for table in SCHEMA:
        columns = [name for name, _, _ in table_columns(table)]
        described = COLUMN_DESCRIPTIONS[table]
        assert set(described) == set(columns), f"{table}: {set(described) ^ set(columns)}"
        assert all(text.strip().endswith(".") for text in described.values()), table


def test_the_ui_schema_carries_the_descriptions() -> None:
    schema = table_metadata("passages")["dagster/column_schema"]
    by_name = {column.name: column for column in schema.columns}
    assert by_name["span_starts"].description == (
        "Start offset of each covered node's text (or sentence slice) in the document text."
    )
    assert by_name["span_starts"].type == "INTEGER[]" and not by_name["span_starts"].constraints.nullable


def test_placeholders_reach_the_ui_as_code_not_as_html_tags() -> None:
    # the UI renders descriptions as Markdown: a bare <doc_id> would be an HTML tag and vanish
    schema = table_metadata("passages")["dagster/column_schema"]
    by_name = {column.name: column for column in schema.columns}
    assert by_name["passage_id"].description == (
        "Stable passage id: `<doc_id>#<first node id>`, with `.<piece>` when a long node was split."
    )
    for table in SCHEMA:
        for column in table_metadata(table)["dagster/column_schema"].columns:
            bare = column.description.replace("`", "\n").split("\n")[::2]  # the text outside code spans
            assert not any("<" in part for part in bare), (table, column.name, column.description)
