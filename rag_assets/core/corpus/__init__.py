"""Corpus stage: sources, one parser per format, blocks and the Document Structure Trees built from them."""
