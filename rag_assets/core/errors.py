"""The errors a user can cause or fix, as opposed to bugs.

The CLI turns each kind into one line and an exit code (see `rag_assets.cli`); anything else is
a bug and is reported as such. `ConfigError` is a `ValueError`, so code that already handles
bad values keeps working.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration or input the user wrote is wrong; the message names it and the problem."""


class BackendUnavailable(RuntimeError):
    """Something the command needs is not there right now (an endpoint, a busy catalogue)."""


class CatalogueBusy(BackendUnavailable):
    """Another process held the catalogue for longer than the lock timeout."""


class ConfigMistakes(ConfigError):
    """Several independent mistakes in one configuration: one line each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines
