"""API tokens in the catalogue (stored hashed, scoped per collection, revoked), the caller checks
built on them, the rate limit, and what a response may say about the server's files."""

from __future__ import annotations

import duckdb
import pytest
from fastapi import HTTPException

from rag_assets.core.errors import ConfigError
from rag_assets.core.store.answers import AnswerFilter, list_answers
from rag_assets.core.store.api_tokens import (
    askers,
    create_token,
    hash_token,
    list_tokens,
    record_asker,
    revoke_token,
    valid_tokens,
)
from rag_assets.serving.access import Caller, allowed_hosts, collections_for, is_loopback
from rag_assets.serving.limits import RateLimit
from rag_assets.serving.redaction import relative_source, without_paths


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    return duckdb.connect()


def test_a_token_is_stored_hashed_with_a_scope_per_collection(con: duckdb.DuckDBPyConnection) -> None:
    secret = create_token(con, "alice", ["handbook", "faq"], "ask")
    assert secret.startswith("rag_") and len(secret) > 40
    stored = con.execute("SELECT token_hash FROM api_tokens").fetchall()
    assert stored == [(hash_token(secret),), (hash_token(secret),)]
    assert secret not in str(con.execute("SELECT * FROM api_tokens").fetchall())
    grant = valid_tokens(con)[hash_token(secret)]
    assert grant.name == "alice" and grant.scopes == {"handbook": "ask", "faq": "ask"}
    assert grant.allows("faq", "read") and grant.allows("faq", "ask") and not grant.allows("faq", "admin")
    assert not grant.allows("other", "read")


def test_every_collection_and_the_larger_scope_win(con: duckdb.DuckDBPyConnection) -> None:
    create_token(con, "ops", ["*"], "read")
    (grant,) = valid_tokens(con).values()
    assert grant.allows("anything", "read") and not grant.allows("anything", "ask")
    who = Caller(grant)
    assert collections_for(who, lambda: ["a", "b"], None, "read") is None  # every collection
    with pytest.raises(HTTPException) as refused:
        collections_for(who, lambda: ["a", "b"], ["a"], "ask")
    assert refused.value.status_code == 403 and "may not ask in collection 'a'" in refused.value.detail


def test_a_token_of_some_collections_is_kept_to_them(con: duckdb.DuckDBPyConnection) -> None:
    create_token(con, "bob", ["a"], "read")
    who = Caller(next(iter(valid_tokens(con).values())))
    assert collections_for(who, lambda: ["a", "b"], None, "read") == ["a"]
    with pytest.raises(HTTPException) as refused:
        collections_for(who, lambda: ["a", "b"], ["all"], "read")
    assert refused.value.status_code == 403 and "'*'" in refused.value.detail
    open_service = Caller(None)
    assert collections_for(open_service, lambda: ["a", "b"], None, "ask") is None


def test_names_scopes_and_revocation(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(ConfigError, match="scope must be one of read, ask, admin, not 'write'"):
        create_token(con, "x", ["a"], "write")
    with pytest.raises(ConfigError, match="token name 'a b'"):
        create_token(con, "a b", ["a"], "read")
    first = create_token(con, "carol", ["a"], "read")
    with pytest.raises(ConfigError, match="a token named 'carol' exists: revoke it first"):
        create_token(con, "carol", ["a"], "admin")
    revoke_token(con, "carol")
    assert valid_tokens(con) == {}
    second = create_token(con, "carol", ["a"], "admin")
    assert set(valid_tokens(con)) == {hash_token(second)} and first != second
    listed = list_tokens(con)
    assert [(t.name, t.scopes, t.revoked_at is None) for t in listed] == [
        ("carol", {"a": "read"}, False),
        ("carol", {"a": "admin"}, True),
    ]
    with pytest.raises(ConfigError, match="no valid token named 'dave'"):
        revoke_token(con, "dave")


def test_the_asking_token_is_recorded_and_contains_matches_literally(con: duckdb.DuckDBPyConnection) -> None:
    record_asker(con, "a1", "alice")
    assert askers(con, ["a1", "a2"]) == {"a1": "alice"}
    con.execute(
        "CREATE TABLE answers (answer_id VARCHAR, created_at TIMESTAMP, collection VARCHAR, source VARCHAR,"
        " strategy VARCHAR, question VARCHAR, answer VARCHAR, cited_node_ids INTEGER[])"
    )
    for i, (collection, question) in enumerate([("a", "100% sure?"), ("a", "plain"), ("b", "a_b")]):
        con.execute(
            "INSERT INTO answers VALUES (?, now(), ?, 'service', 'rdr2', ?, '', [])", [f"x{i}", collection, question]
        )
    questions = lambda **f: [r.question for r in list_answers(con, AnswerFilter(**f))]  # noqa: E731
    assert questions(contains="%") == ["100% sure?"]
    assert questions(contains="_") == ["a_b"]
    assert sorted(questions(within=("a",))) == ["100% sure?", "plain"]
    assert questions(within=()) == []


def test_the_rate_limit_refuses_past_the_rate_with_retry_after() -> None:
    limit = RateLimit("2/minute")
    limit.hit("alice")
    limit.hit("alice")
    limit.hit("bob")
    with pytest.raises(HTTPException) as refused:
        limit.hit("alice")
    assert refused.value.status_code == 429 and 1 <= int(refused.value.headers["Retry-After"]) <= 60
    with pytest.raises(ValueError, match="rate limit 'often'"):
        RateLimit("often")


def test_hosts_and_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.5")
    assert allowed_hosts("0.0.0.0", ["kb.example.org"]) == ["127.0.0.1", "localhost", "[::1]", "kb.example.org"]
    assert allowed_hosts("10.0.0.5") == ["127.0.0.1", "localhost", "[::1]", "10.0.0.5"]
    # a Host header carries an IPv6 address in brackets
    assert allowed_hosts("fd00::5", ["::2"]) == ["127.0.0.1", "localhost", "[::1]", "[::2]", "[fd00::5]"]
    assert allowed_hosts("::") == ["127.0.0.1", "localhost", "[::1]"]


def test_sources_are_named_relative_to_their_collection() -> None:
    assert relative_source("/srv/docs/manuals/kettle.md", "tiny/manuals/kettle.md", "tiny") == "manuals/kettle.md"
    assert relative_source("/srv/docs/pages.jsonl#line=3", "c/pages.jsonl/p3", "c") == "pages.jsonl#line=3"
    assert relative_source("/srv/elsewhere/x.md", "c/y.md", "c") == "x.md"
    assert relative_source("pydoc_data.topics#with", "python/with", "python") == "pydoc_data.topics#with"


def test_error_messages_lose_their_paths() -> None:
    message = "no catalogue at /tmp/pytest-1/data/catalogue.duckdb yet: run `rag run` first"
    assert without_paths(message) == "no catalogue at …/catalogue.duckdb yet: run `rag run` first"
    assert without_paths("see http://127.0.0.1:8765/docs") == "see http://127.0.0.1:8765/docs"
