"""Who may do what: the service's callers, told apart by their API token (`Authorization: Bearer`).

With no token in the catalogue, a service bound to loopback answers everyone on the machine
(the zero-set-up default): every caller may do everything. As soon as one token exists (or the
service listens on another address) every request needs a valid token, and each endpoint checks
the token's scope in the collections it touches (core/store/api_tokens.py). The valid tokens are
read again whenever the catalogue changed, so a revoked token is refused from the next request on.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import HTTPException, Request

from rag_assets.core.errors import ConfigError
from rag_assets.core.store.api_tokens import EVERY_COLLECTION, TokenGrant, hash_token, valid_tokens
from rag_assets.serving.catalogue_reads import catalogue_path, catalogue_stamp, read_catalogue
from rag_assets.serving.limits import MAX_QUESTION_CHARS, check_length

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")  # as a Host header names them (IPv6 in brackets)
WILDCARDS = ("0.0.0.0", "::", "")  # bind addresses meaning "every interface"
OPEN_CALLER = "local"  # the rate limiter's key for callers of an open (loopback, no tokens) service
NO_TOKEN = "no token"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_literal(host: str) -> str:
    """`host` as a URL and a Host header write it: an IPv6 address in brackets (`[::1]`)."""
    bare = host.strip("[]")
    try:
        return f"[{bare}]" if ipaddress.ip_address(bare).version == 6 else bare
    except ValueError:
        return host


def is_wildcard(bind: str) -> bool:
    return bind.strip("[]") in WILDCARDS


def allowed_hosts(bind: str, extra: list[str] | None = None) -> list[str]:
    """The Host header values the service answers (DNS rebinding sends a foreign name): the
    loopback names, the address it is bound to (unless a wildcard) and `extra`, IPv6 addresses
    in brackets as the header carries them."""
    hosts = [*LOOPBACK_NAMES, *(extra or [])]
    if not is_wildcard(bind):
        hosts.append(bind)
    return list(dict.fromkeys(host_literal(h).lower() for h in hosts))


def local_url(bind: str, port: int) -> str:
    """The URL a client on this machine reaches a service bound to `bind` at, with a Host header
    the service answers: the bound address, or for a wildcard the loopback address (a Host of
    0.0.0.0 is refused)."""
    if is_wildcard(bind):
        host = "[::1]" if bind.strip("[]") == "::" else "127.0.0.1"
    else:
        host = host_literal(bind)
    return f"http://{host}:{port}"


class TokenBook:
    """The valid tokens, read again whenever the catalogue changed."""

    def __init__(self, *, tokens_required: bool) -> None:
        self.tokens_required = tokens_required
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._grants: dict[str, TokenGrant] = {}

    def grants(self) -> dict[str, TokenGrant]:
        stamp = catalogue_stamp(catalogue_path())
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                if catalogue_path().exists():
                    with read_catalogue() as con:
                        self._grants = valid_tokens(con)
                else:
                    self._grants = {}
            return self._grants

    @property
    def open(self) -> bool:
        """Whether callers need no token (loopback and no token in the catalogue)."""
        return not self.tokens_required and not self.grants()


@dataclass(frozen=True, slots=True)
class Caller:
    """The caller of one request: a token's grant, or None for an open service (may do all)."""

    grant: TokenGrant | None

    @property
    def name(self) -> str | None:
        return self.grant.name if self.grant else None

    @property
    def key(self) -> str:
        return self.grant.name if self.grant else OPEN_CALLER

    @property
    def everywhere(self) -> bool:
        return self.grant is None or EVERY_COLLECTION in self.grant.scopes

    def allows(self, collection: str, scope: str) -> bool:
        return self.grant is None or self.grant.allows(collection, scope)

    def check(self, collections: list[str], scope: str) -> None:
        """403 unless the token has `scope` in every one of `collections`."""
        refused = [c for c in collections if not self.allows(c, scope)]
        if refused:
            raise HTTPException(
                403, f"token {self.name!r} may not {scope} in collection {', '.join(map(repr, refused))}"
            )

    def within(self, known: list[str], scope: str) -> list[str]:
        """Of `known` collections, those where the token has `scope`."""
        return [c for c in known if self.allows(c, scope)]


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header value (None: none sent)."""
    kind, _, value = (authorization or "").partition(" ")
    return value.strip() or None if kind.lower() == "bearer" else None


def bearer(request: Request) -> str | None:
    return bearer_token(request.headers.get("authorization"))


@dataclass(frozen=True, slots=True)
class TokenChannel:
    """How a caller sends its token, in the words a refusal tells it."""

    missing: str
    unknown: str


OVER_HTTP = TokenChannel("send Authorization: Bearer TOKEN", "the API token is unknown or revoked")
OVER_STDIO = TokenChannel(
    "set RAG_SERVICE_TOKEN to one (`rag token create`)", "the API token in RAG_SERVICE_TOKEN is unknown or revoked"
)


def identify(book: TokenBook, token: str | None, channel: TokenChannel = OVER_HTTP) -> Caller:
    """The caller holding `token`; 401 when a token is needed and this one is missing or not valid
    (the message says how to send one over `channel`)."""
    if book.open:
        return Caller(None)
    if token is None:
        raise HTTPException(401, f"this service needs an API token: {channel.missing}", {"WWW-Authenticate": "Bearer"})
    grant = book.grants().get(hash_token(token))
    if grant is None:
        raise HTTPException(401, channel.unknown, {"WWW-Authenticate": "Bearer"})
    return Caller(grant)


def token_label(book: TokenBook, token: str | None) -> str:
    """Who a refused request came as, for the log: the token's name (never the token itself),
    `no token`, or `an unknown token`."""
    if token is None:
        return NO_TOKEN
    try:
        grant = book.grants().get(hash_token(token))
    except Exception:  # the log line must not fail: the catalogue may be busy or gone
        return "a token (not checked)"
    return f"token {grant.name!r}" if grant is not None else "an unknown token"


def caller(request: Request) -> Caller:
    """FastAPI dependency: the request's caller (401 without a valid token where one is needed),
    counted against the per-caller rate limit (429)."""
    state = request.app.state
    who = identify(state.tokens, bearer(request))
    state.rate_limit.hit(who.key)
    return who


def maybe_caller(request: Request) -> Caller | None:
    """FastAPI dependency for what anyone may reach (/health): the caller, or None without a valid token."""
    try:
        return identify(request.app.state.tokens, bearer(request))
    except HTTPException:
        return None


def collections_for(
    who: Caller, known: Callable[[], list[str]], wanted: list[str] | None, scope: str
) -> list[str] | None:
    """The collections a request of `who` touches: `wanted` if the token has `scope` in each (403
    otherwise); none named: every one (None) for a token of every collection, else its own of
    `known()`. `['all']` (routed over every collection) needs `scope` in '*'."""
    if wanted == ["all"]:
        if not who.allows(EVERY_COLLECTION, scope):
            raise HTTPException(403, f"collection 'all' needs a token with {scope} in every collection ('*')")
        return wanted
    if wanted:
        who.check(wanted, scope)
        return wanted
    if who.allows(EVERY_COLLECTION, scope):
        return None
    mine = who.within(known(), scope)
    if not mine:
        raise HTTPException(403, f"token {who.name!r} may not {scope} in any collection of this catalogue")
    return mine


def ask_target(who: Caller, known: Callable[[], list[str]], question: str, collection: str | None) -> str | None:
    """The collection an ask of `who` goes to, as `QueryService.ask` takes it (413: question too
    long; 403: no `ask` there; several askable and none named: a ConfigError)."""
    check_length("the question", question, MAX_QUESTION_CHARS)
    wanted = collections_for(who, known, [collection] if collection else None, "ask")
    if wanted is None or len(wanted) == 1:
        return wanted[0] if wanted else None
    raise ConfigError(f"say which collection: the token may ask in {', '.join(wanted)}")
