"""Index stage: node-aligned passages, embeddings, the LanceDB index, retrieval and reranking."""
