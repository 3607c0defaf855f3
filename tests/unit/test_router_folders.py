"""Which folders count as published routers: the marker written last by the atomic publish."""

from __future__ import annotations

import json
from pathlib import Path

from rag_assets.core.routing.folders import router_folder_kind


def test_a_folder_is_a_router_only_with_its_complete_marker(tmp_path: Path) -> None:
    encoder, llm, torn, empty = (tmp_path / name for name in ("enc", "lora", "torn", "empty"))
    for folder in (encoder, llm, torn, empty):
        folder.mkdir()
    (encoder / "router.json").write_text(json.dumps({"kind": "encoder"}))
    (llm / "adapter_config.json").write_text("{}")
    (torn / "router.json").write_text('{"kind": "enc')  # a half-written record is no router
    assert [router_folder_kind(f) for f in (encoder, llm, torn, empty)] == ["encoder", "llm", None, None]
    assert router_folder_kind(tmp_path / "missing") is None
