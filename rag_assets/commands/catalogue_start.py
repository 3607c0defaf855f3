"""What `rag run`, `rag index`, `rag serve` and `rag ask` do with the catalogue before anything
else: bring an older one up to date in place (store/upgrades.py, a copy kept first), then name
each published piece answering would go without, with the command that makes it, so that a
missing router or answer policy is read at start, not discovered at ask time."""

from __future__ import annotations

from collections.abc import Callable

from rag_assets.commands.errors import say_waiting
from rag_assets.commands.output import note


def start_checks(collections: list[str] | None = None, say: Callable[[str], None] = note) -> list[str]:
    """Upgrade the catalogue when older; say (and return) one line per missing piece of
    `collections` (None: every collection with document trees). No catalogue yet: nothing."""
    from rag_assets.core.settings import catalogue_file
    from rag_assets.core.store.answers import tree_collections
    from rag_assets.core.store.connections import catalogue_connection
    from rag_assets.core.store.published_models import missing_piece_notes
    from rag_assets.core.store.upgrades import upgrade_catalogue

    path = catalogue_file()
    upgrade = upgrade_catalogue(path, on_wait=say_waiting)
    if upgrade is not None:
        say(upgrade.note)
    if not path.exists():
        return []
    with catalogue_connection(path, read_only=True, on_wait=say_waiting) as con:
        known = tree_collections(con)
        notes = [line for name in collections or known if name in known for line in missing_piece_notes(con, name)]
    for line in notes:
        say(line)
    return notes
