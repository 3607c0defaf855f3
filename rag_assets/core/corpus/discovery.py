"""Which files a collection path names: a file, a folder read recursively, or a glob; symbolic
links to files followed, links to folders and broken links reported, in a stable order."""

from __future__ import annotations

import errno
import glob
import os
from pathlib import Path

from rag_assets.core.corpus.card_sidecar import CARDS_FILE
from rag_assets.core.corpus.parsers.web_page import is_page_asset


def discover_files(path: str) -> list[Path]:
    """The files a collection path names, sorted so ids and order are stable."""
    return discover(path)[0]


def discover(path: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(files, skipped links with the reason) a collection path names, both sorted. Symbolic
    links to files are followed; links to folders are not (no loops, no surprise trees), and
    dangling or looping links are reported rather than silently dropped. The scripts, styles and
    images a browser saved beside a page (`NAME_files/` next to `NAME.html`) are the page's, not
    documents: they are not listed; nor is the owner's `cards.yaml` at the collection's root
    (core/corpus/card_sidecar.py)."""
    if any(ch in path for ch in "*?["):
        matches = sorted(Path(p) for p in glob.glob(path, recursive=True))
        base = collection_root(path)
        files = [p for p in matches if p.is_file() and not is_page_asset(p, base) and p != base / CARDS_FILE]
        skipped = [(p, problem) for p in matches if p.is_symlink() and (problem := link_problem(p))]
        return files, skipped
    root = Path(path)
    if root.is_dir():
        files, skipped = [], []
        for p in sorted(root.rglob("*")):
            if p.name.startswith(".") or p == root / CARDS_FILE:
                continue
            if p.is_symlink():
                problem = link_problem(p)
                if problem:
                    skipped.append((p, problem))
                    continue
            if p.is_file() and not is_page_asset(p, root):
                files.append(p)
        return files, skipped
    if root.is_file():
        return [root], []
    raise FileNotFoundError(f"collection path {path!r} matches no file or folder")


def link_problem(link: Path) -> str | None:
    """Why a symbolic link is not read as a document (None: it points at a regular file)."""
    try:
        target = os.readlink(link)
    except OSError:
        return None
    try:
        link.stat()
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f"symbolic link loop ({link.name} -> {target} leads back to itself)"
        return f"dangling symbolic link: its target {target} does not exist"
    if link.is_dir():
        return f"symbolic link to the folder {target}, not followed (name that folder in the collections file instead)"
    if not link.is_file():
        return f"symbolic link to {target}, which is not a regular file"
    return None


def collection_root(path: str) -> Path:
    if any(ch in path for ch in "*?["):
        return Path(glob.escape(path).split("*")[0] or ".").parent
    root = Path(path)
    return root if root.is_dir() else root.parent
