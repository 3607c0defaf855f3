"""The `structure` group: Document Structure Trees built from the source documents."""
