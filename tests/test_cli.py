"""`rag tree` on each format, as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rag_assets.cli import app

runner = CliRunner()


def test_tree_outline_for_markdown(corpus_dir: Path) -> None:
    result = runner.invoke(app, ["tree", str(corpus_dir / "kettle.md")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "0: Kettle manual"
    assert "  1: Read this manual before first use." in lines
    assert "  2: Filling" in lines
    assert "      4: at least 0.5 litres" in lines  # list item under its introducing paragraph


def test_tree_json_for_every_format(corpus_dir: Path) -> None:
    for name in ("kettle.md", "pond.html", "pass.txt", "phone.json"):
        result = runner.invoke(app, ["tree", str(corpus_dir / name), "--json"])
        assert result.exit_code == 0, (name, result.output)
        doc = json.loads(result.stdout)
        assert doc["nodes"][0] == {"node_id": 0, "parent_id": None, "kind": "structure", "depth": 0, "text": doc["title"]}
        assert any(n["kind"] == "content" for n in doc["nodes"])
    pages = json.loads(runner.invoke(app, ["tree", str(corpus_dir / "pages.jsonl"), "--json"]).stdout)
    assert [p["title"] for p in pages] == ["Lighthouses", "Tide"]


def test_tree_reports_a_rejected_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00binary")
    result = runner.invoke(app, ["tree", str(bad)])
    assert result.exit_code == 1
    assert "binary file" in result.stderr
