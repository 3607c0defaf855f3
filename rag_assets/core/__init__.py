"""The domain: document structure trees, parsers, passages, retrieval.

Nothing in this package imports Dagster, so it can be unit-tested on its own and reused by the
command line.
"""
