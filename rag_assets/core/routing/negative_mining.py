"""Hard negatives for the encoder router, mined by the untrained encoder.

Why: the router's failures on the real sets are within one document, not across documents. On
nq_wiki the whole routed page is one view of hundreds of nodes, and where the router's own
choices miss, the answer node is its 2nd or 3rd best, a few hundredths of a cosine under a
neighbour that reads alike (the cast list against the infobox naming the same actors). The
contrastive loss learns to tell nodes apart only from the negatives it is shown: the in-batch
ones come from other questions and documents, and a negative drawn at random from a page of
hundreds of nodes is almost always an easy one. Drawing them from the nodes the untrained
encoder (the similarity router, where training starts) ranks highest among the view's non-gold
candidates shows the loss exactly the confusions it has to undo, as the passage reranker's
negatives are the first stage's top non-gold hits.

Not the single top-ranked node: a node that answers the question without holding the answer
string (so the oracle did not label it) is likeliest there, so each negative is drawn at random
from the best `pool`.

Measured on nq_wiki's 55 questions, cross-fitted (docs/results.md, "Router training on the real
sets"), it lost 0.09 of the budget-filled router's passage hit and left its own choices' hit as it
was, so `view` stays the default (`EncoderSettings.negative_source`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rag_assets.core.routing.samples import RoutingExample

NEGATIVE_SOURCES = ("view", "base_encoder")  # random from the view; the base encoder's best non-gold
MINED_POOL = 5  # the base encoder's best non-gold candidates a mined negative is drawn from


def base_encoder_rankings(
    examples: Sequence[RoutingExample],
    candidates: Callable[[RoutingExample], dict[int, str]],
    encode: Callable[[Sequence[str]], np.ndarray],
) -> list[list[int]]:
    """For each example, its candidate node ids (`candidates`: id -> text as the encoder reads
    it), the one `encode` places nearest the question first. Each distinct text is encoded once:
    the views of one document share most of their nodes."""
    shown = [candidates(e) for e in examples]
    texts = sorted({t for texts in shown for t in texts.values()} | {e.query for e in examples})
    if not texts:
        return [[] for _ in examples]
    vectors = encode(texts)
    row = {t: i for i, t in enumerate(texts)}
    rankings = []
    for example, texts_by_id in zip(examples, shown):
        ids = list(texts_by_id)
        if not ids:
            rankings.append([])
            continue
        cosines = vectors[[row[t] for t in texts_by_id.values()]] @ vectors[row[example.query]]
        # Stable order for equal cosines: the smaller id first.
        rankings.append([ids[i] for i in sorted(range(len(ids)), key=lambda i: (-float(cosines[i]), ids[i]))])
    return rankings
