"""`document_cards`: what each document of a collection would be filed under (title, organisation,
kind, period; product, model, version), read from its tree's first nodes and corrected by the
owner's `cards.yaml` (core/corpus/document_cards.py, core/corpus/card_sidecar.py)."""

from collections import Counter
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from rag_assets.core.corpus.card_sidecar import CARDS_FILE, CardSidecar, read_sidecar
from rag_assets.core.corpus.discovery import collection_root
from rag_assets.core.corpus.document_cards import CARD_NODES, card_from_nodes, card_values
from rag_assets.core.corpus.sources import BUILTIN_PYTHON_REFERENCE
from rag_assets.core.errors import ConfigError
from rag_assets.core.store.card_tables import cards_table, first_nodes
from rag_assets.core.store.collections import replace_collection
from rag_assets.core.store.document_tables import document_sources
from rag_assets.defs.deployment import CATALOGUE_POOL
from rag_assets.defs.metadata import counter_table, markdown_table, row_count_metadata, table_metadata
from rag_assets.defs.partitions import collection_partitions
from rag_assets.defs.structure.document_trees import document_trees
from resources.sources import SourcesResource


def sidecar_of(sources: SourcesResource, collection: str) -> CardSidecar:
    """The owner's cards file of `collection`: `cards.yaml` at the root of its folder (none for a
    built-in source); a file that cannot be used fails the step, naming the file and the problem."""
    spec = sources.collection(collection)
    if spec.path.startswith(BUILTIN_PYTHON_REFERENCE):
        return CardSidecar()
    try:
        return read_sidecar(Path(collection_root(spec.path)) / CARDS_FILE)
    except ConfigError as err:
        raise dg.Failure(description=str(err), allow_retries=False) from None


@dg.asset(
    pool=CATALOGUE_POOL,
    partitions_def=collection_partitions,
    deps=[document_trees],
    group_name="structure",
    kinds={"python", "duckdb"},
    metadata=table_metadata("document_cards"),
    description="A card per document: title, organisation, kind (10-K, 10-Q, 8-K, earnings release, "
    "manual), fiscal year, quarter, date, product, model, version, read from the first nodes of its tree "
    "(an SEC cover page, a release's headline, a manual's title page); the collection folder's cards.yaml "
    "overrides fields by doc id (`from_sidecar` says which). `rag documents` lists them; `--by-name` "
    "matches a question's company and period against them.",
)
def document_cards(
    context: dg.AssetExecutionContext, catalogue: DuckDBResource, sources: SourcesResource
) -> dg.MaterializeResult:
    collection = context.partition_key
    sidecar = sidecar_of(sources, collection)
    with catalogue.get_connection() as con:
        nodes = first_nodes(con, collection, CARD_NODES)
        titles = document_sources(con, collection, list(nodes))
    cards = [card_from_nodes(doc_id, titles.get(doc_id, ("", ""))[0], tree) for doc_id, tree in nodes.items()]
    cards, unknown = sidecar.apply(cards, collection)
    for entry in unknown:
        context.log.warning(f"{sidecar.path}: entry {entry!r} names no document of {collection}")
    with catalogue.get_connection() as con:
        replace_collection(con, collection, {"document_cards": cards_table(collection, cards)})
        row_counts = row_count_metadata(con, "document_cards", collection)
    shown = ["doc_id", "title", "organisation", "kind", "fiscal_year", "quarter", "date", "from_sidecar"]
    rows = [[str(card_values(c)[name] or "") for name in shown] for c in cards[:30]]
    return dg.MaterializeResult(
        metadata={
            **row_counts,
            "documents": len(cards),
            "with_organisation": sum(bool(c.organisation) for c in cards),
            "with_kind": sum(bool(c.kind) for c in cards),
            "with_period": sum(bool(c.period()) for c in cards),
            "untitled": sum(not c.title for c in cards),
            "sidecar": sidecar.path or "none",
            "sidecar_fields": sum(len(c.from_sidecar) for c in cards),
            "sidecar_unknown_entries": dg.MetadataValue.json(unknown),
            "kinds": dg.MetadataValue.md(counter_table("kind", Counter(c.kind or "-" for c in cards))),
            "cards": dg.MetadataValue.md(markdown_table(shown, rows) if rows else "no documents"),
        }
    )
