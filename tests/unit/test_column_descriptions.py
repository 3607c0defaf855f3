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
