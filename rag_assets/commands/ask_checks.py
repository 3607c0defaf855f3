"""`rag ask`'s choices checked before anything loads a model: a wrong strategy, mode, router or
style is one line per mistake in a second or two, not after the embedder and reader load."""

from __future__ import annotations

from rag_assets.core.answering.policy.options import MODES, ROUTERS, AskOptions
from rag_assets.core.answering.reader_prompts import STYLES
from rag_assets.core.errors import ConfigError, ConfigMistakes
from rag_assets.core.settings import service_url


def ask_mistakes(strategy: str, options: AskOptions) -> list[str]:
    """One line per option `rag ask` cannot run with (the lists the answering path accepts)."""
    from rag_assets.core.answering.policy.catalogue import canonical_strategy  # the names only: no model

    mistakes: list[str] = []
    try:
        canonical_strategy(strategy)
    except ConfigError as err:
        mistakes.append(f"--{err}")  # "--strategy must be one of ..."
    for flag, value, choices in (
        ("--mode", options.retrieval_mode, MODES),
        ("--router", options.router, ROUTERS),
        ("--style", options.style, tuple(STYLES)),
    ):
        if value is not None and value not in choices:
            mistakes.append(f"{flag} must be {', '.join(choices[:-1])} or {choices[-1]}, not {value!r}")
    return mistakes


def check_ask(strategy: str, options: AskOptions, collection: str | None = None) -> None:
    """Raise the mistakes of `ask_mistakes`, one line each; answered here (no RAG_SERVICE_URL),
    upgrade an older catalogue and name the pieces `collection` (None or `all`: every one) lacks."""
    mistakes = ask_mistakes(strategy, options)
    if mistakes:
        raise ConfigMistakes(mistakes)
    if service_url() is None:
        from rag_assets.commands.catalogue_start import start_checks

        start_checks(None if collection in (None, "all") else [collection])
