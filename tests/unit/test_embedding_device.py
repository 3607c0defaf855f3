"""How the embedder picks its precision and batch size from the device."""

from __future__ import annotations

import pytest

from rag_assets.core.index import embedding
from rag_assets.core.index.embedding import resolve_batch_size, resolve_precision

pytestmark = pytest.mark.unit


def test_auto_precision_is_bfloat16_only_where_the_device_computes_it_natively(monkeypatch) -> None:
    monkeypatch.setattr(embedding, "native_bfloat16", lambda device: True)
    assert resolve_precision("auto", "cpu") == "bfloat16"
    monkeypatch.setattr(embedding, "native_bfloat16", lambda device: False)
    assert resolve_precision("auto", "cpu") == "float32"
    # an explicit choice is kept whatever the device
    assert resolve_precision("float32", "cpu") == "float32"
    assert resolve_precision("bfloat16", "cpu") == "bfloat16"


def test_an_unknown_precision_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="'float16' is not one of auto, float32, bfloat16"):
        resolve_precision("float16", "cpu")  # type: ignore[arg-type]


def test_batch_size_by_device_unless_given() -> None:
    assert resolve_batch_size(None, "cpu") == 8
    assert resolve_batch_size(0, "cpu") == 8
    assert resolve_batch_size(0, "cuda") == 64
    assert resolve_batch_size(32, "cpu") == 32
    with pytest.raises(ValueError, match="batch size -1 is negative"):
        resolve_batch_size(-1, "cpu")


def test_a_device_other_than_cpu_or_cuda_never_autocasts() -> None:
    assert embedding.native_bfloat16("mps") is False
