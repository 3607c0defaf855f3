"""Asset checks and Great Expectations suites, kept beside the stages they guard."""
