"""The encoder router's hard negatives mined by the real packaged MiniLM: drawn from the nodes it
confuses with the answer, not from the whole view; and a router trained on them for real."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.routing.encoder_settings import EncoderSettings
from rag_assets.core.routing.encoder_training import (
    candidate_texts,
    encoder_pairs,
    mined_rankings,
    router_record,
    train_encoder,
)
from rag_assets.core.routing.negative_mining import base_encoder_rankings
from rag_assets.core.routing.samples import RoutingExample
from rag_assets.core.routing.subtree import DocumentRouting

INFOBOX = "Starring Emma Watson , Dan Stevens , Luke Evans , Ewan McGregor , Emma Thompson"
LUMIERE = "Ewan McGregor as Lumière , the Beast 's charismatic candelabra"


def film_page() -> list:
    return build_tree(
        "Beauty and the Beast (2017 film)",
        [
            paragraph(INFOBOX),
            heading("Cast", 1),
            paragraph(LUMIERE),
            paragraph("Emma Watson as Belle , a bookish young woman"),
            heading("Production", 1),
            paragraph("Filming took place at Shepperton Studios in England from May 2015."),
            paragraph("The score was composed by Alan Menken with new songs."),
            heading("Reception", 1),
            paragraph("The film grossed over $1.2 billion worldwide."),
        ],
    ).nodes


def example(query: str, gold_text: str) -> RoutingExample:
    nodes = film_page()
    state = DocumentRouting("film", nodes)
    view = state.light(tuple(n.node_id for n in nodes if n.kind == "content"))
    gold = next(n.node_id for n in nodes if n.text == gold_text)
    return RoutingExample(query, state, view, frozenset({gold}), frozenset())


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(progress=False, device="cpu")


def test_mined_negatives_are_the_nodes_the_base_encoder_confuses_with_the_answer(embedder: Embedder) -> None:
    lumiere = example("who does ewan mcgregor play in beauty and the beast", LUMIERE)
    [ranking] = base_encoder_rankings([lumiere], candidate_texts, embedder.encode)
    nodes = lumiere.state.nodes
    assert sorted(ranking) == sorted(candidate_texts(lumiere))  # every candidate, once
    assert nodes[ranking[0]].text == LUMIERE
    # The one negative from the best non-gold node: the infobox naming the same actor, never the
    # filming or box-office paragraphs a random draw from the page mostly gives.
    [pair] = encoder_pairs([lumiere], negatives=1, rankings=[ranking], pool=1)
    assert pair.negatives[0].endswith(INFOBOX)
    drawn = {
        encoder_pairs([lumiere], negatives=1, seed=s, rankings=[ranking], pool=2)[0].negatives[0] for s in range(20)
    }
    assert len(drawn) == 2 and all("Shepperton" not in t and "grossed" not in t for t in drawn)
    with pytest.raises(ValueError, match="2 rankings for 1 examples"):
        encoder_pairs([lumiere], rankings=[ranking, ranking])


def test_an_encoder_trained_on_mined_negatives_records_where_they_came_from(embedder: Embedder, tmp_path: Path) -> None:
    train = [
        example("who does ewan mcgregor play in beauty and the beast", LUMIERE),
        example("who plays belle", "Emma Watson as Belle , a bookish young woman"),
        example("where was the film shot", "Filming took place at Shepperton Studios in England from May 2015."),
        example("how much money did it make", "The film grossed over $1.2 billion worldwide."),
    ]
    assert len(mined_rankings(embedder.model_path, train, "cpu")) == len(train)
    settings = EncoderSettings(epochs=1, batch_size=2, negatives=1, negative_source="base_encoder")
    result = train_encoder(embedder.model_path, train, train[:2], tmp_path, settings, device="cpu", progress=False)
    assert result.pairs == 4 and result.steps == 2
    assert router_record(result.folder)["settings"]["negative_source"] == "base_encoder"
    with pytest.raises(ValueError, match="negative_source must be one of"):
        EncoderSettings(negative_source="random")
