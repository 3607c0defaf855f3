"""The packaged embedder under bfloat16 autocast against float32: the same vectors for search."""

from __future__ import annotations

import numpy as np
import pytest

from rag_assets.core.index.embedding import Embedder
from resources.embedder import EmbedderResource

pytestmark = pytest.mark.integration

TEXTS = [
    "Item 7. Management's Discussion and Analysis > Liquidity\nCash provided by operations was $7.2 billion.",
    "Purchases of property, plant and equipment | 2018: (1,577) | 2017: (1,373) | 2016: (1,420)",
    "Press the switch and the kettle boils the water in two minutes.",
    "Keep a hole in the pond ice so that gases can escape for the fish.",
    "What was the capital expenditure in 2018?",
]


@pytest.fixture(scope="module")
def float32() -> Embedder:
    return Embedder(device="cpu", precision="float32", progress=False)


def test_bfloat16_vectors_are_float32_unit_vectors_close_to_the_float32_ones(float32: Embedder) -> None:
    bfloat16 = Embedder(device="cpu", precision="bfloat16", progress=False)
    exact, cast = float32.encode(TEXTS), bfloat16.encode(TEXTS)
    assert cast.dtype == np.float32 and cast.shape == exact.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(cast, axis=1), 1.0, atol=1e-3)
    assert (cast * exact).sum(axis=1).min() > 0.999
    # the question finds the same passages in the same order either way
    query = [float32.encode_query(TEXTS[-1]), bfloat16.encode_query(TEXTS[-1])]
    assert list(np.argsort(-(exact[:4] @ query[0]))) == list(np.argsort(-(cast[:4] @ query[1])))


def test_float32_precision_gives_the_same_numbers_at_any_batch_size(float32: Embedder) -> None:
    one_by_one = Embedder(device="cpu", precision="float32", batch_size=1, progress=False)
    np.testing.assert_allclose(one_by_one.encode(TEXTS), float32.encode(TEXTS), atol=1e-5)


def test_the_resource_passes_its_precision_and_batch_size_on() -> None:
    embedder = EmbedderResource(progress=False, device="cpu", precision="float32", batch_size=3).get()
    assert (embedder.precision, embedder.batch_size) == ("float32", 3)
    assert EmbedderResource(progress=False, device="cpu").get().batch_size == 8
