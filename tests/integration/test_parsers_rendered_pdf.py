"""A page with known headings printed to PDF by headless Chromium reads back as the same tree,
from the outline Chromium writes and from the layout alone; Chromium's running header (date,
title) and footer (file URL, page numbers) are dropped."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rag_assets.core.corpus.sources import CollectionSpec, ingest
from rag_assets.core.corpus.tree import tree_problems
from rag_assets.core.corpus.tree_building import document_tree

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Boiler Guide</title></head><body>
<h1>Boiler Guide</h1>
<p>This guide covers installing and servicing the boiler.</p>
<h2>Installation</h2>
<p>Fit the boiler to a solid wall and leave room for servicing.</p>
<ul><li>Check the gas supply</li><li>Fill the system<ul><li>open the valve</li><li>bleed the radiators</li></ul></li></ul>
<h3>Flue</h3>
<p>The flue must end outside, away from windows.</p>
<h2 style="page-break-before: always">Servicing</h2>
<p>Have the boiler serviced once a year by an engineer.</p>
<h3>Pressure</h3>
<p>Keep the pressure between one and two bar when the system is cold.</p>
</body></html>
"""

EXPECTED = [
    (0, "Boiler Guide", "pp. 1-2"),
    (1, "This guide covers installing and servicing the boiler.", "p. 1"),
    (1, "Installation", "p. 1"),
    (2, "Fit the boiler to a solid wall and leave room for servicing.", "p. 1"),
    (3, "Check the gas supply", "p. 1"),
    (3, "Fill the system", "p. 1"),
    (4, "open the valve", "p. 1"),
    (4, "bleed the radiators", "p. 1"),
    (2, "Flue", "p. 1"),
    (3, "The flue must end outside, away from windows.", "p. 1"),
    (1, "Servicing", "p. 2"),
    (2, "Have the boiler serviced once a year by an engineer.", "p. 2"),
    (2, "Pressure", "p. 2"),
    (3, "Keep the pressure between one and two bar when the system is cold.", "p. 2"),
]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")
@pytest.mark.parametrize("outline", [True, False], ids=["outline", "layout-only"])
def test_chromium_printed_page_reads_back_as_its_tree(tmp_path: Path, outline: bool) -> None:
    html = tmp_path / "boiler.html"
    html.write_text(PAGE, encoding="utf-8")
    pdf = tmp_path / "docs" / "boiler.pdf"
    pdf.parent.mkdir()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
    if outline:
        flags.append("--generate-pdf-document-outline")
    subprocess.run(
        [CHROMIUM, *flags, f"--print-to-pdf={pdf}", html.as_uri()], check=True, capture_output=True, timeout=120
    )
    result = ingest(CollectionSpec("docs", str(pdf.parent), "auto"))
    assert result.rejections == []
    (document,) = result.documents
    assert document.format == "pdf" and document.title == "Boiler Guide"
    tree = document_tree(document)
    assert tree_problems(tree.nodes, tree.text) == []
    assert [(n.depth, n.text, n.pages) for n in tree.nodes] == EXPECTED
