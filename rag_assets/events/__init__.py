"""What the pipeline and the service record in, and read from, the Dagster instance (events and
materialization records): below both the asset definitions and the service, which import it."""
