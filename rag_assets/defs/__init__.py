"""The code location's definitions, by asset group in lineage order: `corpus` (sources,
questions) -> `structure` (document trees) -> `index` (passages and their published index, the
passage reranker, the namespace router) -> `routing` (routing data, the trained routers, their
metrics, the reorder policy) -> `evaluation` (answers, evidence, the report). Beside them what
every group shares: partitions, deployment tags, metadata helpers, upstream reads, the side
tables, and the schedules and sensors (`automation`). `rag_assets/definitions.py` assembles them."""
