"""The UI draws the asset groups left to right in pipeline order: corpus -> structure -> index ->
routing -> evaluation. That holds only if no asset depends on an asset of a later group."""

from __future__ import annotations

GROUPS = ["corpus", "structure", "index", "routing", "evaluation"]


def test_groups_are_the_pipeline_stages_and_every_dependency_points_forward() -> None:
    from rag_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    nodes = {key.to_user_string(): graph.get(key) for key in graph.get_all_asset_keys()}
    group = {name: node.group_name for name, node in nodes.items()}
    assert set(group.values()) == set(GROUPS)
    backwards = [
        f"{parent.to_user_string()} ({group[parent.to_user_string()]}) -> {name} ({group[name]})"
        for name, node in nodes.items()
        for parent in node.parent_keys
        if GROUPS.index(group[parent.to_user_string()]) > GROUPS.index(group[name])
    ]
    assert backwards == []
    # side tables sit with the step that writes them
    assert group["rejected_documents"] == group["document_trees"] == "structure"
