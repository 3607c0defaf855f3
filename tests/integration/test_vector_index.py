"""The passage index for real: LanceDB in tmp_path, the packaged all-MiniLM-L6-v2 embedder."""

from __future__ import annotations

from pathlib import Path

import lancedb
import numpy as np
import pytest

from rag_assets.core.corpus.blocks import heading, paragraph
from rag_assets.core.corpus.tree import build_tree
from rag_assets.core.index.embedding import Embedder
from rag_assets.core.index.full_text import full_text_search
from rag_assets.core.index.passages import cut_passages
from rag_assets.core.index.retrieval import search
from rag_assets.core.index.vector_index import PassageIndex

DOCS = {
    "kettle": [heading("Boiling", 1), paragraph("Press the switch and the kettle boils the water in two minutes.")],
    "pond": [heading("Winter", 1), paragraph("Keep a hole in the pond ice so that gases can escape for the fish.")],
    "bike": [heading("Tyres", 1), paragraph("Inflate bicycle tyres to the pressure printed on the sidewall.")],
}


class CountingEmbedder(Embedder):
    """The real embedder, recording which texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(progress=False)
        self.calls: list[list[str]] = []

    def encode(self, texts, *, progress=None):
        self.calls.append(list(texts))
        return super().encode(texts, progress=progress)


@pytest.fixture(scope="module")
def embedder() -> CountingEmbedder:
    return CountingEmbedder()


def _passages(docs: dict) -> list:
    out = []
    for name, blocks in docs.items():
        tree = build_tree(name.title(), blocks)
        out += cut_passages(f"c/{name}", tree.nodes, tree.text)
    return out


def test_build_and_search_in_every_mode(tmp_path: Path, embedder: CountingEmbedder) -> None:
    index = PassageIndex(tmp_path / "lance", embedder)
    report = index.sync(_passages(DOCS), "c", tag="first")
    assert (report.added, report.updated, report.deleted, report.unchanged) == (3, 0, 0, 0)
    assert index.has_fts_index() and index.check_vectors() == []
    assert index.tags() == {"first": report.version} and index.counts_by_collection() == {"c": 3}
    index.sync(_passages({"other": [paragraph("The kettle of another collection.")]}), "elsewhere")
    for mode in ("dense", "bm25", "hybrid"):
        hits = search(
            index, embedder, "how long does the kettle take to boil water?", mode=mode, k=2, collections=["c"]
        )
        assert hits[0].doc_id == "c/kettle", mode
        assert hits[0].rank == 1 and hits[0].node_ids == (2,) and hits[0].heading_path == ("Kettle", "Boiling")
        assert all(h.collection == "c" for h in hits)
    everywhere = search(index, embedder, "kettle", mode="bm25", k=5)
    assert {h.collection for h in everywhere} == {"c", "elsewhere"}
    with pytest.raises(ValueError, match="unknown search mode"):
        search(index, embedder, "x", mode="fuzzy")


def test_pylance_full_text_search_gives_lancedbs_bm25_rows_and_scores(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    docs = dict(DOCS, teapot=[heading("Tea", 1), paragraph("Warm the teapot with water from the kettle first.")])
    index = PassageIndex(tmp_path / "lance", embedder)
    first = index.sync(_passages(docs), "c", tag="first").version
    index.sync(_passages({"other": [paragraph("The kettle of another collection.")]}), "elsewhere")
    dataset = str(tmp_path / "lance" / "passages.lance")
    for collections in (["c"], None):
        light = full_text_search(dataset, "the kettle's water?", k=3, collections=collections)
        full = search(index, embedder, "the kettle's water?", mode="bm25", k=3, collections=collections)
        assert [(h.passage_id, round(h.score, 5), h.node_ids, h.spans, h.heading_path) for h in light] == [
            (h.passage_id, round(h.score, 5), h.node_ids, h.spans, h.heading_path) for h in full
        ]
    everywhere = full_text_search(dataset, "kettle", k=5)
    assert {(h.collection, h.doc_id) for h in everywhere} == {
        ("c", "c/kettle"),
        ("c", "c/teapot"),
        ("elsewhere", "c/other"),
    }
    # an older version does not know the rows added after it
    assert {h.collection for h in full_text_search(dataset, "kettle", k=5, version=first)} == {"c"}
    with pytest.raises(FileNotFoundError, match="materialize `passage_index` first"):
        full_text_search(str(tmp_path / "nothing.lance"), "kettle")


def test_reindex_embeds_exactly_the_new_and_changed_passages(tmp_path: Path, embedder: CountingEmbedder) -> None:
    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(_passages(DOCS), "c", tag="v1")
    index.sync(_passages({"x": [paragraph("unrelated other collection")]}), "other")
    before = index._scan(["passage_id", "vector"]).to_pydict()
    pond_vector = before["vector"][before["passage_id"].index("c/pond#2")]

    docs = dict(DOCS)
    docs["kettle"] = [
        heading("Boiling", 1),
        paragraph("Press the switch; the kettle boils in three minutes."),
    ]  # changed
    docs["lamp"] = [heading("Bulbs", 1), paragraph("Use LED bulbs of at most 9 watts.")]  # added
    del docs["bike"]  # deleted
    embedder.calls.clear()
    report = index.sync(_passages(docs), "c", tag="v2")

    assert sorted(report.embedded_ids) == ["c/kettle#2", "c/lamp#2"]
    assert [len(call) for call in embedder.calls] == [2]
    assert (report.added, report.updated, report.deleted, report.unchanged) == (1, 1, 1, 1)
    after = index._scan(["passage_id", "vector", "text"]).to_pydict()
    assert sorted(after["passage_id"]) == ["c/kettle#2", "c/lamp#2", "c/pond#2", "c/x#1"]
    assert np.array_equal(after["vector"][after["passage_id"].index("c/pond#2")], pond_vector)
    assert index.counts_by_collection() == {"c": 3, "other": 1}
    assert index.tags()["v2"] > index.tags()["v1"]

    embedder.calls.clear()
    again = index.sync(_passages(docs), "c", tag="v3")
    assert again.embedded_ids == [] and embedder.calls == [] and again.unchanged == 3


def test_searching_before_anything_is_indexed_says_what_to_do(tmp_path: Path, embedder: CountingEmbedder) -> None:
    index = PassageIndex(tmp_path / "empty", embedder)
    with pytest.raises(FileNotFoundError, match="materialize `passage_index` first"):
        search(index, embedder, "anything")


def test_an_optional_cross_encoder_reranks_in_every_mode(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """No cross-encoder ships offline, so this one is built from the packaged MiniLM folder with a
    fresh (untrained) scoring head: it exercises the real rerank path, not ranking quality."""
    from rag_assets.core.index.embedding import default_embedder_path
    from rag_assets.core.index.retrieval import cross_encoder_reranker

    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(_passages(DOCS), "c")
    reranker = cross_encoder_reranker(default_embedder_path())
    for mode in ("dense", "bm25", "hybrid"):
        plain = search(index, embedder, "kettle water", mode=mode, k=3)
        reranked = search(index, embedder, "kettle water", mode=mode, k=3, reranker=reranker)
        assert {h.passage_id for h in reranked} <= {p.passage_id for p in _passages(DOCS)}
        assert [h.rank for h in reranked] == list(range(1, len(reranked) + 1))
        assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
        assert [h.score for h in reranked] != [h.score for h in plain]
    with pytest.raises(FileNotFoundError, match="cross-encoder model folder"):
        cross_encoder_reranker(tmp_path / "missing")


def test_cleanup_past_the_retention_keeps_the_published_versions(tmp_path: Path, embedder: CountingEmbedder) -> None:
    # Lance refuses a cleanup whose cutoff would drop a tagged version; with a cutoff younger than
    # the kept publications (here: zero, i.e. an index older than its retention) it must still run.
    from datetime import timedelta

    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(_passages(DOCS), "c", tag="c-1")
    index.sync(_passages({"kettle": DOCS["kettle"]}), "c", tag="c-2")
    index.sync(_passages({"x": [paragraph("another collection")]}), "other")
    report = index.cleanup("c", keep_tags=1, older_than=timedelta(0))
    assert report.tags_deleted == ["c-1"] and set(index.tags()) == {"c-2"}
    published = lancedb.connect(tmp_path / "lance").open_table(index.table.name)
    published.checkout("c-2")
    assert published.count_rows("collection = 'c'") == 1  # the publication answers cite stays readable


def test_an_unchanged_passage_at_a_shifted_place_is_rewritten_with_its_vector(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    # Lengthening the first section's paragraph shifts the second section's offsets in the
    # document text: its passage keeps its id and text, and its row must cite the new place (a
    # citation at the old offsets would lie outside the node, or cut another node's text).
    care = "Descale the kettle with white vinegar once a month. " * 12  # sections this long are not joined

    def kettle(first: str) -> dict:
        return {
            "kettle": [
                heading("Boiling", 1),
                paragraph(first * 12),
                heading("Cleaning", 1),
                paragraph(care),
            ]
        }

    index = PassageIndex(tmp_path / "lance", embedder)
    index.sync(_passages(kettle("Press the switch. ")), "c")
    before = index._scan(["passage_id", "vector", "span_starts"]).to_pydict()
    cleaning = before["passage_id"].index("c/kettle#4")
    embedder.calls.clear()
    edited = _passages(kettle("Press the switch and wait. "))
    report = index.sync(edited, "c")
    assert (report.updated, report.moved, report.unchanged) == (1, 2, 0)  # the care section is cut in two
    assert report.embedded_ids == ["c/kettle#2"] and [len(call) for call in embedder.calls] == [1]
    after = index._scan(["passage_id", "vector", "span_starts", "span_ends"]).to_pydict()
    row = after["passage_id"].index("c/kettle#4")
    [moved] = [p for p in edited if p.passage_id == "c/kettle#4"]
    assert after["span_starts"][row] == [moved.spans[0][0]] != before["span_starts"][cleaning]
    assert np.array_equal(after["vector"][row], before["vector"][cleaning])  # not embedded again
    tree = build_tree("Kettle", kettle("Press the switch and wait. ")["kettle"])
    start, end = after["span_starts"][row][0], after["span_ends"][row][0]
    assert care.startswith(tree.text[start:end]) and end - start > 500
