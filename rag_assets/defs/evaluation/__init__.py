"""The `evaluation` group: every strategy's answers, the evidence evaluation and the report; with
the strategies' config."""
