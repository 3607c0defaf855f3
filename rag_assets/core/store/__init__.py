"""Storage: the one owner of every DuckDB table, schema, transaction and SQL statement."""
