"""A backup's manifest: what it holds (each file with its SHA-256 and size) and what a restore
must find again (the catalogue's row counts, the LanceDB versions). A backup is written under a
temporary name and renamed only once the manifest is in it, so a backup that was killed midway
has no manifest (or a folder name `restore` never reads); a file changed or cut short since
fails its hash."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rag_assets.core.errors import ConfigError

MANIFEST = "manifest.json"
FORMAT = 1
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Manifest:
    created_at: str
    catalogue_version: int
    data_dir: str  # where the data was (its published folders' paths start with it)
    tables: dict[str, int]  # catalogue table -> rows
    lance_versions: dict[str, list[int]]  # LanceDB table -> its versions
    files: dict[str, dict[str, object]] = field(default_factory=dict)  # relative path -> sha256, bytes
    format: int = FORMAT

    def write(self, folder: Path) -> None:
        (folder / MANIFEST).write_text(json.dumps(asdict(self), indent=1, sort_keys=True), encoding="utf-8")


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def hashed_files(folder: Path) -> dict[str, dict[str, object]]:
    """Every file under `folder` (but the manifest), by path relative to it, with its hash and size."""
    return {
        str(p.relative_to(folder)): {"sha256": file_digest(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def verified_manifest(folder: Path) -> Manifest:
    """The manifest of the backup in `folder`, after checking every file it lists is there with
    its hash; a ConfigError naming the first problem otherwise."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise ConfigError(f"no backup at {folder}: not a folder")
    if not path.is_file():
        raise ConfigError(f"{folder} is no complete backup: it has no {MANIFEST} (a backup killed midway?)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        manifest = Manifest(**raw)
    except (ValueError, TypeError) as err:
        raise ConfigError(f"{path} is not a backup manifest: {err}") from None
    if manifest.format != FORMAT:
        raise ConfigError(f"{path} is backup format {manifest.format}; this rag reads format {FORMAT}")
    for name, expected in manifest.files.items():
        copy = folder / name
        if not copy.is_file():
            raise ConfigError(f"the backup {folder} lacks {name}, which its manifest lists")
        if copy.stat().st_size != expected["bytes"] or file_digest(copy) != expected["sha256"]:
            raise ConfigError(f"the backup {folder} has {name} changed since it was taken (its hash differs)")
    return manifest
