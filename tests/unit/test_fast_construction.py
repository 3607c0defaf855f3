"""The two speed tricks of tree building keep exact semantics."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from rag_assets.core.corpus.blocks import Block, BlockKind, collapse_spaces, frozen_factory, new_block
from rag_assets.core.corpus.tree import TreeNode


def test_every_splitting_character_but_the_space_is_non_printable() -> None:
    """`collapse_spaces` returns printable text unchanged when it has no double/edge spaces: that
    is only right if no printable character other than ' ' is whitespace."""
    offenders = [c for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 32 and chr(c).isprintable()]
    assert offenders == []


@pytest.mark.parametrize("text", ["plain words", " lead", "trail ", "a  b", "tab\there", "nbsp\u00a0x", "", "  "])
def test_collapse_spaces_equals_split_and_join(text: str) -> None:
    assert collapse_spaces(text) == " ".join(text.split())


def test_frozen_factory_builds_ordinary_frozen_instances() -> None:
    fast = new_block(BlockKind.PARAGRAPH, "x", 0)
    slow = Block(BlockKind.PARAGRAPH, "x", 0)
    assert type(fast) is Block and fast == slow and hash(fast) == hash(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.text = "y"  # type: ignore[misc]
    assert dataclasses.replace(fast, text="y") == Block(BlockKind.PARAGRAPH, "y", 0)
    values = (3, 1, "content", "paragraph", 2, "text", ("Title", "Section"), 10, 14)
    node = frozen_factory(TreeNode)(*values)
    assert type(node) is TreeNode and node == TreeNode(*values) and hash(node) == hash(TreeNode(*values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.text = "other"  # type: ignore[misc]
