"""The query side: search, ask, trace and list answers in process (`query.QueryService`, used by
the CLI) or as a long-lived HTTP service with an audit web page (`rag serve`, `app`)."""
