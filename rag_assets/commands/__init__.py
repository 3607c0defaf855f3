"""What the `rag` commands do, apart from their Typer options (rag_assets/cli.py is only the
option layer). Every module here imports its heavy libraries inside the functions that need them,
so `rag --help`, `rag trace` or a BM25 search never load torch or a model."""
