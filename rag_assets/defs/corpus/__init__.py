"""The `corpus` group: every collection's source documents and its question sets."""
