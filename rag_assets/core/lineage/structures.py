"""The intermediate structures stored with contregen / disco answers (`answers.structure`),
walked down to the exact source spans: every citation inside them (a leaf's passages, a discourse
unit, a chunk) is resolved against the document text as it is now, and rendered for `rag trace`.

The structures are JSON written by `core/generation`: contregen's `tree` (query, level, status,
raw decomposition, finding, finding_status, passages -> citations, children), disco's `chunks`
(units -> citation, citations), `graph` and `blueprint`. A citation is
{doc_id, node_id, heading_path?, span: [start, end], text}.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from rag_assets.core.text import first_words

TextAt = Callable[[str], str | None]  # doc_id -> the document's current text (None: gone)


def structure_citations(structure: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every citation dict inside a structure (in place: resolving edits them)."""
    stack = [structure.get("tree")] if structure.get("tree") else []
    while stack:
        node = stack.pop()
        for passage in node.get("passages", []):
            yield from passage.get("citations", [])
        stack.extend(reversed(node.get("children", [])))
    for chunk in structure.get("chunks", []):
        for unit in chunk.get("units", []):
            if unit.get("citation"):
                yield unit["citation"]
        yield from chunk.get("citations", [])


def structure_doc_ids(structure: dict[str, Any]) -> set[str]:
    return {c["doc_id"] for c in structure_citations(structure)}


def resolve_structure(structure: dict[str, Any], text_at: TextAt) -> dict[str, Any]:
    """A copy where each citation also has `current_text` (the document text at its span now,
    None when the document is gone) and `changed`."""
    resolved = copy.deepcopy(structure)
    for cite in structure_citations(resolved):
        text = text_at(cite["doc_id"])
        start, end = cite["span"]
        cite["current_text"] = None if text is None else text[start:end]
        cite["changed"] = cite["current_text"] != cite["text"]
    return resolved


def _cite_line(cite: dict[str, Any]) -> str:
    state = "CHANGED" if cite.get("changed") else "unchanged" if "changed" in cite else ""
    text = cite.get("current_text") if cite.get("current_text") is not None else cite.get("text", "")
    start, end = cite["span"]
    return (
        f"{cite['doc_id']} node {cite['node_id']} chars {start}-{end} {state}: {first_words(text, 16, mark_cut=True)}"
    )


def _tree_lines(node: dict[str, Any], label: str, indent: int) -> list[str]:
    pad = "  " * indent
    finding = node.get("finding") or ""
    lines = [f"{pad}{label} {node['query']}  [{node['status']}, finding {node.get('finding_status') or '-'}]"]
    if finding:
        lines.append(f"{pad}   finding: {first_words(finding, 30, mark_cut=True)}")
    for passage in node.get("passages", []):
        lines.append(f"{pad}   passage {passage['passage_id']} ({' > '.join(passage.get('heading_path', []))})")
        lines += [f"{pad}     {_cite_line(c)}" for c in passage.get("citations", [])]
    for i, child in enumerate(node.get("children", []), start=1):
        lines += _tree_lines(child, str(i) if label == "Q" else f"{label}.{i}", indent + 1)
    return lines


def structure_lines(structure: dict[str, Any]) -> list[str]:
    """Human-readable walk: answer -> synthesis tree -> sub-queries -> passages -> source spans;
    or answer -> blueprint -> rhetorical graph -> chunks -> discourse units -> source spans."""
    if not structure:
        return []
    counts = ", ".join(f"{k} {v}" for k, v in (structure.get("counts") or {}).items())
    stages = " -> ".join(structure.get("stages", []))
    if "tree" in structure:
        head = (
            f"synthesis tree (contregen, depth {structure.get('tree_depth')}, "
            f"branching {structure.get('tree_branching')}; stages {stages}; {counts}):"
        )
        return [head, *_tree_lines(structure["tree"], "Q", 1)]
    lines = [f"{structure.get('strategy', 'disco')} (stages {stages}; {counts}):"]
    blueprint = structure.get("blueprint") or {}
    lines.append(f"  blueprint [{blueprint.get('status', 'none')}]:")
    lines += [f"    - [{s['passage']}] {s['step']}" for s in blueprint.get("steps", [])]
    if structure.get("graph"):
        edges = [f"[{e['from']}] {e['relation'] or 'INVALID'} [{e['to']}]" for e in structure["graph"]]
        lines.append("  rhetorical graph: " + "; ".join(edges))
    for chunk in structure.get("chunks", []):
        lines.append(
            f"  [{chunk['passage']}] passage {chunk['passage_id']} ({' > '.join(chunk.get('heading_path', []))}) "
            f"[{chunk['status']}]"
        )
        for unit in chunk.get("units", []):
            relation = (
                f"{unit['unit']}, {unit['relation']} of {unit['parent']}" if unit.get("relation") else unit["unit"]
            )
            lines.append(f"      ({relation}) {_cite_line(unit['citation'])}")
        if not chunk.get("units"):
            lines += [f"      {_cite_line(c)}" for c in chunk.get("citations", [])]
    return lines
