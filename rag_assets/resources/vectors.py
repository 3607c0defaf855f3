"""The LanceDB passage index as a resource (a local folder by default; any LanceDB URI works)."""


import dagster as dg

from rag_assets.core.embedding import Embedder
from rag_assets.core.vector_index import PassageIndex
from rag_assets.settings import data_dir


class VectorStoreResource(dg.ConfigurableResource):
    uri: str = str(data_dir() / "lancedb")
    table_name: str = "passages"

    def index(self, embedder: Embedder) -> PassageIndex:
        return PassageIndex(self.uri, embedder, table_name=self.table_name)
