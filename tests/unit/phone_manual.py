"""A small phone manual, as a document tree, shared by the routing unit tests.

Node ids: 0 Phone, 1 Getting started, 2 "Charge the battery for 3 hours.", 3 Settings, 4 Display,
5 "Dark mode saves the battery.", 6 Sound, 7 "Set the ringtone volume."."""

from __future__ import annotations

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import TreeNode, build_tree


def phone_nodes() -> list[TreeNode]:
    return build_tree(
        "Phone",
        [
            heading("Getting started", 1),
            paragraph("Charge the battery for 3 hours."),
            heading("Settings", 1),
            heading("Display", 2),
            paragraph("Dark mode saves the battery."),
            heading("Sound", 2),
            paragraph("Set the ringtone volume."),
        ],
    ).nodes
