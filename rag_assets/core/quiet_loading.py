"""Model loading without the noise a user cannot act on.

Building the reranker's cross-encoder from the packaged bi-encoder makes transformers print a
"LOAD REPORT" of the classifier head it had to initialise (expected: we train that head) and
sentence-transformers warn that it converts the model; converting the packaged GGUF prints a
progress bar per tensor batch even into a log file. Inside `quiet_model_loading()` those
libraries report errors only, and progress bars are drawn on a terminal only: transformers' own
bars are switched off, and, off a terminal, what plain `tqdm` bars (the GGUF conversion's) write
to stderr is dropped (log records still go out: their handlers hold their own stream).
"""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext, redirect_stderr

_LIBRARY_LOGGERS = ("sentence_transformers", "transformers")


@contextmanager
def quiet_model_loading() -> Iterator[None]:
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    levels = {name: logging.getLogger(name).level for name in _LIBRARY_LOGGERS}
    terminal = sys.stderr.isatty()
    hf_logging.set_verbosity_error()
    if not terminal:
        hf_logging.disable_progress_bar()
    for name in _LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        with nullcontext() if terminal else redirect_stderr(io.StringIO()):
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
