"""The generation-side strategies: ConTReGen (`contregen.py`) and Disco-RAG (`disco.py`; its
evidence model, rendering and structure JSON in `disco_evidence.py`), their prompts and grammars
(`prompts.py`), validating parsers (`parsers.py`) and stage batching (`stages.py`).
`core/answering/strategies.py` dispatches the `contregen` and `disco` kinds to them."""
