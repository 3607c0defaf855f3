"""The `index` group: passages cut from the trees, their published LanceDB index, and the retrieval
side's trained pieces (passage reranker, namespace router)."""
