"""`rag backup` and `rag restore`: a consistent snapshot of everything a deployment keeps (the
catalogue, the LanceDB index with its versions, the published model folders, the Dagster
instance's sqlite storage) taken while the service runs, and brought back only when whole."""
