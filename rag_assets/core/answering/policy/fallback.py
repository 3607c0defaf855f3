"""The one fallback rule: an asked strategy whose trained router was not published still runs, as
the same method with the untrained router of that kind, and says so.

- rdr2 routed by the trained encoder, with none published -> the untrained encoder (similarity),
  labelled `rdr2-similarity` (the evaluation's `rdr2` row is the trained encoder's);
- rdr2 routed by the LLM with an adapter, with none published -> the base model.

Every user of an ask (the service, `rag ask`, the `answer_policy` asset measuring the default
form and floor, the benchmarks) applies this rule and no other, so what is measured is what is
asked. Other missing pieces (a reranker, a namespace router, a reorder policy) are not replaced:
the strategy cannot run (`AnsweringSession.missing_piece`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rag_assets.core.answering.published import PublishedCollection
from rag_assets.core.answering.types import StrategySpec


@dataclass(frozen=True, slots=True)
class Runnable:
    spec: StrategySpec
    note: str | None  # what was replaced, in words a person reads beside the answer


def runnable_spec(spec: StrategySpec, published: PublishedCollection) -> Runnable:
    """`spec`, routed by what was published for its collection (see the module's rule)."""
    collection = published.collection
    if spec.kind == "rdr2" and spec.router == "encoder" and "encoder" not in published.routers:
        base, form = spec.name.removesuffix("-extractive"), spec.name[len(spec.name.removesuffix("-extractive")) :]
        label = f"rdr2-similarity{form}" if base in ("rdr2", "rdr2-encoder") else spec.name
        note = f"no trained encoder router for {collection!r}: routing with the untrained encoder (similarity)"
        # an expand threshold learned on the trained encoder's scores means nothing on the untrained one's
        return Runnable(dataclasses.replace(spec, router="similarity", name=label, expand_threshold=None), note)
    if spec.kind == "rdr2" and spec.router == "llm" and spec.adapter and published.llm_adapter is None:
        note = f"no trained LLM router for {collection!r}: routing with the base model"
        return Runnable(dataclasses.replace(spec, adapter=None), note)
    return Runnable(spec, None)
