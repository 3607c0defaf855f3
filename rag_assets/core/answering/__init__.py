"""Answering: the strategies (rag, rdr2, dota, r4, contregen, disco), readers and the generation-side systems."""
