"""`rag documents`: each document's card (title, organisation, kind, period) as the catalogue
holds it (`document_cards`), and which of its fields the owner's cards.yaml set."""

from __future__ import annotations

import typer


def documents(
    collection: list[str] = typer.Option(None, "--collection", "-c", help="Only these collections (default: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print the cards as JSON."),
) -> None:
    """List the document cards: what each document would be filed under, read from the document."""
    from rich.table import Table

    from rag_assets.commands.errors import console
    from rag_assets.commands.output import note, print_json
    from rag_assets.core.corpus.document_cards import card_values
    from rag_assets.core.store.card_tables import load_cards
    from rag_assets.serving.catalogue_reads import check_collections, read_catalogue

    with read_catalogue() as con:
        known = check_collections(con, collection or None)
        cards = load_cards(con, known)
    if as_json:
        print_json([card_values(c) for c in cards])
        return
    if not cards:
        note(f"no document cards for {', '.join(known) or 'any collection'}: materialize document_cards")
        return
    table = Table("doc id", "organisation", "kind", "period", "title", "from cards.yaml")
    for c in cards:
        table.add_row(c.doc_id, c.organisation, c.kind, c.period(), c.title, ", ".join(c.from_sidecar))
    console.print(table)
