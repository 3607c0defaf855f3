"""`rag backup PATH` and `rag restore PATH`: what a deployment keeps, copied while the service
runs and brought back whole (rag_assets/core/backup does the work; docs/operations.md)."""

from __future__ import annotations

from pathlib import Path

import typer


def _stores():
    from rag_assets.commands.errors import checked_data_dir
    from rag_assets.core.backup.snapshot import Stores
    from rag_assets.core.settings import dagster_home, lancedb_uri

    return Stores(checked_data_dir(), Path(lancedb_uri()), dagster_home())


def backup(path: Path = typer.Argument(..., help="A new folder to write the backup to.")) -> None:
    """Back up the catalogue, the LanceDB index (all its versions), the published model folders
    and the Dagster instance's storage into PATH, while the service and runs go on (a write waits
    only while the catalogue file is copied). PATH appears only once the backup is whole."""
    from rag_assets.commands.errors import console, say_waiting
    from rag_assets.core.backup.snapshot import take_backup

    manifest = take_backup(_stores(), path, on_wait=say_waiting)
    size = sum(int(f["bytes"]) for f in manifest.files.values())
    console.print(
        f"backed up to {path}: {len(manifest.files)} files, {size / 1e6:.1f} MB; catalogue "
        f"{sum(manifest.tables.values())} rows in {len(manifest.tables)} tables; LanceDB "
        + ", ".join(f"{name.removesuffix('.lance')} v{max(v)}" for name, v in manifest.lance_versions.items() if v),
        highlight=False,
        soft_wrap=True,
    )


def restore(
    path: Path = typer.Argument(..., help="A folder `rag backup` wrote."),
    force: bool = typer.Option(False, "--force", help="Replace the catalogue, index, models and runs already there."),
) -> None:
    """Restore a backup into the data dir (RAG_DATA_DIR) and DAGSTER_HOME, after checking every
    file's hash; then check the catalogue's rows, the LanceDB versions and that each collection's
    catalogue passages and index agree. Refuses a place that is not empty without --force."""
    from rag_assets.commands.errors import console
    from rag_assets.core.backup.restore import restore_backup

    restored = restore_backup(path, _stores(), force=force)
    agreed = ", ".join(f"{a.collection} ({a.catalogue_passages} passages)" for a in restored.agreements)
    console.print(
        f"restored {path} (taken {restored.manifest.created_at}): rows and LanceDB versions as backed up; "
        f"catalogue and index agree for {agreed or 'no collection'}"
        + (f"; {restored.relocated} published folder path(s) moved to this data dir" if restored.relocated else ""),
        highlight=False,
        soft_wrap=True,
    )
