"""Model loading stays quiet in logs: no third-party progress bars or load reports off a terminal."""

from __future__ import annotations

import logging

import pytest
from tqdm.auto import tqdm

from rag_assets.core.quiet_loading import quiet_model_loading


def test_plain_tqdm_bars_and_library_warnings_are_dropped_off_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    # pytest's captured stderr is not a terminal, as a piped `make run 2>&1 | cat` is not
    st_logger = logging.getLogger("sentence_transformers")
    before = st_logger.level
    with quiet_model_loading():
        for _ in tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."):
            pass
        assert st_logger.getEffectiveLevel() == logging.ERROR
    for _ in tqdm(range(1), desc="after"):  # outside, bars are untouched
        pass
    err = capsys.readouterr().err
    assert "Converting" not in err and "after" in err
    assert st_logger.level == before
