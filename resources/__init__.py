"""Dagster resources: every external thing the assets touch is configured here."""
