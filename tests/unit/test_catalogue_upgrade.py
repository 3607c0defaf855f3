"""A catalogue written by the release before schema versions (commit e781c6c, see
tests/fixtures/catalogues/README.md) opened with the current code: upgraded in place with a copy
kept first, no row lost, its `answer_form` row carried over as the `answer_policy` piece the next
ask reads, and the pieces answering would go without named at start, not at ask time."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from rag_assets.core.answering.policy.default_form import DEFAULT_FORM
from rag_assets.core.answering.published import ANSWER_POLICY_KIND, load_published
from rag_assets.core.errors import ConfigError
from rag_assets.core.store import upgrades
from rag_assets.core.store.connections import catalogue_connection
from rag_assets.core.store.published_models import KINDS, missing_piece_notes
from rag_assets.core.store.transactions import ensure_schema

FIXTURE = Path(__file__).parents[1] / "fixtures" / "catalogues" / "e781c6c-catalogue.zip"
# the fixture's tables and rows as e781c6c wrote them (counted once when it was made)
OLD_ROWS = {
    "answer_askers": 0,
    "answers": 0,
    "api_tokens": 0,
    "document_nodes": 59,
    "document_texts": 8,
    "index_publications": 2,
    "passages": 18,
    "published_models": 6,
    "questions": 0,
    "rejected_documents": 0,
    "router_adapters": 0,
    "router_metrics": 0,
    "routing_actions": 0,
    "routing_subtrees": 0,
    "routing_view_settings": 1,
    "source_documents": 8,
    "synthetic_questions": 0,
}
BARE_NOTES = [
    "router_adapter was never materialized for bare: `rag run -c bare` trains it",
    "answer_policy was never materialized for bare: answers use a quote and no relevance floor until `rag run`",
]
TINY_NOTES = [
    "the published reranker /tmp/oldfx/data/rerankers/tiny-r1 of tiny is gone: `rag run -c tiny` publishes it again"
]


@pytest.fixture
def old_catalogue(tmp_path: Path) -> Path:
    with zipfile.ZipFile(FIXTURE) as archive:
        archive.extract("catalogue.duckdb", tmp_path / "data")
    return tmp_path / "data" / "catalogue.duckdb"


def _rows(path: Path) -> dict[str, int]:
    with catalogue_connection(path, read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in sorted(tables)}


def _version(path: Path) -> int:
    with catalogue_connection(path, read_only=True) as con:
        return upgrades.catalogue_version(con)


def test_the_old_catalogue_is_upgraded_in_place_with_a_copy_and_no_row_lost(old_catalogue: Path) -> None:
    assert _rows(old_catalogue) == OLD_ROWS and _version(old_catalogue) == 1

    done = upgrades.upgrade_catalogue(old_catalogue)

    assert (done.from_version, done.to_version, done.changed_rows) == (1, 2, 1)
    assert done.backup == old_catalogue.with_name("catalogue.duckdb.v1.bak")
    assert _rows(done.backup) == OLD_ROWS and _version(done.backup) == 1  # the copy is the catalogue before
    # every old row kept; the tables this release added exist, empty (document cards: `rag index`)
    assert _rows(old_catalogue) == {**OLD_ROWS, "catalogue_meta": 1, "document_cards": 0}
    assert _version(old_catalogue) == 2
    assert upgrades.upgrade_catalogue(old_catalogue) is None  # once only


def test_the_old_answer_form_is_the_answer_policy_the_next_ask_reads(old_catalogue: Path) -> None:
    upgrades.upgrade_catalogue(old_catalogue)
    with catalogue_connection(old_catalogue, read_only=True) as con:
        rows = con.execute("SELECT collection, kind, model_id, details FROM published_models ORDER BY kind").fetchall()
        published = load_published(con, "tiny")
        bare = load_published(con, "bare")
    assert [(c, k) for c, k, _, _ in rows] == [
        ("tiny", "answer_policy"),
        ("tiny", "encoder"),
        ("tiny", "llm"),
        ("", "namespaces"),
        ("tiny", "reranker"),
        ("tiny", "similarity"),
    ]
    details = json.loads(rows[0][3])
    assert rows[0][2] == "extractive" and details["migrated_from"]["kind"] == "answer_form"
    assert details["migrated_from"]["model_id"] == "generated" and details["migrated_from"]["details"]["metric"] == "f1"
    # the next ask: a quote (the old form was chosen by a retired rule), the old relevance floor kept
    assert published.default_form == "extractive"
    assert (published.relevance_floor.value, published.relevance_floor.questions) == (0.2125, 12)
    assert (published.similarity.answer, published.similarity.expand) == (0.61, 0.42)
    assert published.reranker is None  # its folder is gone
    assert published.index.version is not None and published.index.consistent
    assert bare.form_choice is None and bare.relevance_floor is None


def test_the_pieces_answering_goes_without_are_named(old_catalogue: Path) -> None:
    upgrades.upgrade_catalogue(old_catalogue)
    with catalogue_connection(old_catalogue, read_only=True) as con:
        assert missing_piece_notes(con, "bare") == BARE_NOTES
        assert missing_piece_notes(con, "tiny") == TINY_NOTES


def test_start_checks_upgrade_then_name_the_missing_pieces(
    old_catalogue: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag_assets.commands.catalogue_start import start_checks

    monkeypatch.setenv("RAG_DATA_DIR", str(old_catalogue.parent))
    said: list[str] = []
    assert start_checks(None, said.append) == BARE_NOTES + TINY_NOTES
    assert said[0].startswith(f"upgraded the catalogue {old_catalogue} from schema version 1 to 2")
    assert said[1:] == BARE_NOTES + TINY_NOTES
    assert start_checks(["tiny"], said.append) == TINY_NOTES  # upgraded already: no second upgrade line
    assert said[-1] == TINY_NOTES[0] and len(said) == 5


def test_a_failed_upgrade_leaves_the_catalogue_as_it_was(old_catalogue: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def killed(con) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(upgrades, "_answer_form_to_policy", killed)
    with pytest.raises(KeyboardInterrupt):
        upgrades.upgrade_catalogue(old_catalogue)
    assert _rows(old_catalogue) == OLD_ROWS and _version(old_catalogue) == 1


def test_a_catalogue_newer_than_the_code_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.duckdb"
    with catalogue_connection(path, read_only=False) as con:
        ensure_schema(con, ["published_models"])
        assert upgrades.catalogue_version(con) == 2  # a new catalogue is stamped current
        con.execute("UPDATE catalogue_meta SET schema_version = 3")
    with pytest.raises(ConfigError, match=r"has schema version 3, newer than this rag reads \(2\)"):
        upgrades.upgrade_catalogue(path)


def test_the_store_names_the_answering_kinds() -> None:
    assert upgrades.POLICY_KIND == ANSWER_POLICY_KIND and ANSWER_POLICY_KIND in KINDS
    assert upgrades.UNMEASURED_FORM == DEFAULT_FORM and upgrades.RETIRED_FORM_KIND not in KINDS
