"""Routing stage: retrieval subtrees, the router grammar, routers, teachers, router training and metrics."""
