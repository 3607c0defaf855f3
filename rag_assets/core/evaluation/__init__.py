"""Evaluation: answer and evidence metrics, held-out judging and the report."""
