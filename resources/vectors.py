"""The LanceDB passage index as a resource (a local folder by default; any LanceDB URI works)."""

from datetime import timedelta

import dagster as dg
from pydantic import Field

from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.vector_index import DEFAULT_TABLE, PassageIndex
from rag_assets.core.settings import lancedb_uri


class VectorStoreResource(dg.ConfigurableResource):
    """Where the passage embeddings and the full-text index live."""

    uri: str = Field(
        default="",
        description="A LanceDB URI (folder, s3://…); empty = RAG_LANCEDB_URI (e.g. s3://bucket/lancedb for "
        "workers on several machines), else <data dir>/lancedb (RAG_DATA_DIR, else dagster_home/data).",
    )
    table_name: str = Field(default=DEFAULT_TABLE, min_length=1, description="The LanceDB table of passages.")
    # Retention: every sync writes LanceDB versions, and each publication is tagged; without a
    # cleanup the folder only grows (21 MB after 12 runs of a 6.8 MB index).
    keep_tags_per_collection: int = Field(
        default=3,
        ge=1,
        description="Publication tags (and so readable versions) kept per collection; older ones are deleted.",
    )
    version_retention_hours: float = Field(
        default=1.0,
        ge=0.0,
        description="Untagged LanceDB versions older than this are deleted after each index sync "
        "(a reader of the newest version never loses it mid-query).",
    )

    def resolved_uri(self) -> str:
        return self.uri or lancedb_uri()

    def index(self, embedder: Embedder) -> PassageIndex:
        return PassageIndex(self.resolved_uri(), embedder, table_name=self.table_name)

    def retention(self) -> timedelta:
        return timedelta(hours=self.version_retention_hours)
