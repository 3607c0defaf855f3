"""The project's resources, built in one place: the code location and the `rag` command use the
same objects, so a model or folder configured here is the one both see."""

from dagster_duckdb import DuckDBResource

from rag_assets.core.settings import base_model_path
from resources.catalogue import default_catalogue
from resources.embedder import EmbedderResource
from resources.llm import BaseModelResource, LLMResource
from resources.sources import SourcesResource
from resources.vectors import VectorStoreResource


def project_resources(*, progress: bool = True) -> dict[str, object]:
    """The defaults (all offline); RAG_BASE_MODEL, RAG_LLM_BACKEND and RAG_OPENAI_* switch the
    models without code (see `LLMResource.from_env`). `progress=False` for commands whose output
    is the result (no embedding progress bar)."""
    base_model = BaseModelResource(model_path=base_model_path())
    catalogue: DuckDBResource = default_catalogue()
    return {
        "catalogue": catalogue,
        "sources": SourcesResource(),
        "embedder": EmbedderResource(progress=progress),
        "vectors": VectorStoreResource(),
        "base_model": base_model,
        "llm": LLMResource.from_env(base_model),
    }
