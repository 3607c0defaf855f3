"""The DuckDB catalogue resource (dagster-duckdb), pointed at the project's data folder."""

from dagster_duckdb import DuckDBResource

from rag_assets.settings import data_dir


def default_catalogue() -> DuckDBResource:
    path = data_dir() / "catalogue.duckdb"
    path.parent.mkdir(parents=True, exist_ok=True)
    return DuckDBResource(database=str(path))
