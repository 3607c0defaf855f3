"""The LanceDB passage index as a resource (a local folder by default; any LanceDB URI works)."""

import dagster as dg

from rag_assets.core.embedding import Embedder
from rag_assets.core.vector_index import DEFAULT_TABLE, PassageIndex
from rag_assets.settings import data_dir


class VectorStoreResource(dg.ConfigurableResource):
    """`uri` empty = `<data dir>/lancedb` (RAG_DATA_DIR, else dagster_home/data)."""

    uri: str = ""
    table_name: str = DEFAULT_TABLE

    def resolved_uri(self) -> str:
        return self.uri or str(data_dir() / "lancedb")

    def index(self, embedder: Embedder) -> PassageIndex:
        return PassageIndex(self.resolved_uri(), embedder, table_name=self.table_name)
