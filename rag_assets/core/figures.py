"""PNG figures: one way to make a matplotlib figure (headless Agg backend), save it, and inline a
PNG in Markdown (the Dagster UI and the Markdown report show data-URI images)."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def figure(width: float, height: float, *, dpi: int = 100, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """(figure, axes) that is laid out tightly and closed when the block ends."""
    plt = pyplot()
    fig, axes = plt.subplots(figsize=(width, height), dpi=dpi, **subplots)
    try:
        yield fig, axes
        fig.tight_layout()
    finally:
        plt.close(fig)


def png_bytes(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def png_markdown(png: bytes | Path, title: str) -> str:
    """A PNG (bytes or a file) as a Markdown image with a data URI."""
    data = png.read_bytes() if isinstance(png, Path) else png
    return f"![{title}](data:image/png;base64,{base64.b64encode(data).decode()})"
