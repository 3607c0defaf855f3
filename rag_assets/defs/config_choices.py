"""Run-config fields that name things from a fixed list: one check for all of them, in the config
class itself, so the pre-run check (`rag run --config`) and the step refuse the same names."""

from collections.abc import Sequence


def only_known(values: list[str], known: Sequence[str], what: str) -> list[str]:
    """`values` unchanged, or a ValueError naming the unknown ones and the choices."""
    unknown = [value for value in values if value not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; expected some of {list(known)}")
    return values
